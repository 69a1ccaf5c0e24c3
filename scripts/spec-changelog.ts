// npm run spec:changelog [-- --check | --release] [-- --current FILE --changelog FILE --released-dir DIR]
// Writes CHANGELOG.md's Unreleased section from the compatible changes of the current partner spec against the last
// release. --check writes nothing and fails when the section is stale (CI). --release snapshots the current spec as
// spec/partner-v1/released/openapi-<info.version>.json and dates the Unreleased entries with that version.
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { option } from './spec-args.ts';
import { released, unreleasedBody, withUnreleased } from './spec-changelog-text.ts';
import { compareSpecs, CURRENT_SPEC, readJson, RELEASED_DIR, releasedVersions, versionProblems } from './spec-diff.ts';

const currentFile = option('--current') ?? fileURLToPath(CURRENT_SPEC);
const changelogFile = option('--changelog') ?? fileURLToPath(new URL('../CHANGELOG.md', import.meta.url));
const releasedDir = option('--released-dir') ? pathToFileURL(option('--released-dir')! + '/') : RELEASED_DIR;

const latest = releasedVersions(releasedDir).at(-1);
if (!latest) throw new Error(`no released snapshot in ${fileURLToPath(releasedDir)}`);
const current = readJson(currentFile);
const changes = compareSpecs(readJson(new URL(`openapi-${latest}.json`, releasedDir)), current);
const breaking = changes.filter((c) => c.class === 'breaking');
const changelog = readFileSync(changelogFile, 'utf8');
const updated = withUnreleased(changelog, unreleasedBody(changes, latest));

if (process.argv.includes('--check')) {
  if (updated !== changelog) {
    console.error('CHANGELOG.md is stale: the partner spec changed since it was written. Run `npm run spec:changelog` and commit it.');
    process.exit(1);
  }
  console.log(`CHANGELOG.md is up to date with the partner spec (${changes.length} change(s) since ${latest}).`);
} else if (process.argv.includes('--release')) {
  const version = current.info.version as string;
  const refusals = [
    ...breaking.map((c) => `breaking: ${c.message}`),
    ...versionProblems(latest, version),
    ...(existsSync(new URL(`openapi-${version}.json`, releasedDir)) ? [`${version} is already released: raise info.version first`] : []),
    ...(changes.length === 0 ? [`nothing changed since ${latest}`] : []),
  ];
  if (refusals.length > 0) {
    console.error(`Not releasing partner v1 ${version}:\n  - ${refusals.join('\n  - ')}`);
    process.exit(1);
  }
  copyFileSync(currentFile, new URL(`openapi-${version}.json`, releasedDir));
  const date = new Date().toISOString().slice(0, 10);
  writeFileSync(changelogFile, released(updated, version, date, unreleasedBody([], version)));
  console.log(`Released partner v1 ${version}: spec/partner-v1/released/openapi-${version}.json and CHANGELOG.md; commit both.`);
} else {
  if (breaking.length > 0) console.error(`Left out ${breaking.length} breaking change(s); \`npm run spec:breaking\` lists them.`);
  if (updated !== changelog) writeFileSync(changelogFile, updated);
  console.log(`${updated === changelog ? 'CHANGELOG.md was up to date' : 'wrote CHANGELOG.md'}: ${changes.length - breaking.length} compatible change(s) since ${latest}.`);
}
