// npm run spec:changelog [-- --surface general|partner-v1] [-- --check | --release | --retake]
//                        [-- --current FILE --changelog FILE --released-dir DIR]
// Writes the surface's changelog (partner v1: CHANGELOG.md; general: CHANGELOG-general.md) Unreleased section from
// the compatible changes of its current spec against the last release. --check writes nothing and fails when the
// section is stale (CI). --release snapshots the current spec as spec/<surface>/released/openapi-<info.version>.json
// and dates the Unreleased entries with that version. --retake overwrites the newest snapshot with the current spec
// (for a version not yet published, e.g. after merging work on it) and empties Unreleased.
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { option, surfaceOption } from './spec-args.ts';
import { released, unreleasedBody, withUnreleased } from './spec-changelog-text.ts';
import {
  changelogOf,
  compareSpecs,
  currentSpecOf,
  readJson,
  releasedDirOf,
  releasedVersions,
  versionProblems,
} from './spec-diff.ts';

const surface = surfaceOption();
const currentFile = option('--current') ?? fileURLToPath(currentSpecOf(surface));
const changelogFile = option('--changelog') ?? fileURLToPath(changelogOf(surface));
const releasedDir = option('--released-dir') ? pathToFileURL(option('--released-dir')! + '/') : releasedDirOf(surface);
const changelogName = changelogFile.split('/').at(-1);

const latest = releasedVersions(releasedDir).at(-1);
if (!latest) throw new Error(`no released snapshot in ${fileURLToPath(releasedDir)}`);
const current = readJson(currentFile);
const changes = compareSpecs(readJson(new URL(`openapi-${latest}.json`, releasedDir)), current);
const breaking = changes.filter((c) => c.class === 'breaking');
const changelog = readFileSync(changelogFile, 'utf8');
const updated = withUnreleased(changelog, unreleasedBody(changes, latest));

if (process.argv.includes('--check')) {
  if (updated !== changelog) {
    console.error(
      `${changelogName} is stale: the ${surface} spec changed since it was written. Run \`npm run spec:changelog -- --surface ${surface}\` and commit it.`,
    );
    process.exit(1);
  }
  console.log(`${changelogName} is up to date with the ${surface} spec (${changes.length} change(s) since ${latest}).`);
} else if (process.argv.includes('--retake')) {
  // Breaking changes are accepted: the snapshot is of a version not yet published, so nobody relies on it yet.
  const refusals =
    current.info.version === latest
      ? []
      : [`info.version is ${current.info.version}, the newest snapshot ${latest}: release it instead`];
  if (refusals.length > 0) {
    console.error(`Not retaking the ${surface} snapshot ${latest}:\n  - ${refusals.join('\n  - ')}`);
    process.exit(1);
  }
  copyFileSync(currentFile, new URL(`openapi-${latest}.json`, releasedDir));
  writeFileSync(changelogFile, withUnreleased(changelog, unreleasedBody([], latest)));
  console.log(
    `Retook spec/${surface}/released/openapi-${latest}.json from the current spec and emptied ${changelogName}'s Unreleased; commit both.`,
  );
} else if (process.argv.includes('--release')) {
  const version = current.info.version as string;
  const refusals = [
    ...breaking.map((c) => `breaking: ${c.message}`),
    ...versionProblems(latest, version),
    ...(existsSync(new URL(`openapi-${version}.json`, releasedDir))
      ? [`${version} is already released: raise info.version first`]
      : []),
    ...(changes.length === 0 ? [`nothing changed since ${latest}`] : []),
  ];
  if (refusals.length > 0) {
    console.error(`Not releasing ${surface} ${version}:\n  - ${refusals.join('\n  - ')}`);
    process.exit(1);
  }
  copyFileSync(currentFile, new URL(`openapi-${version}.json`, releasedDir));
  const date = new Date().toISOString().slice(0, 10);
  writeFileSync(changelogFile, released(updated, version, date, unreleasedBody([], version)));
  console.log(
    `Released ${surface} ${version}: spec/${surface}/released/openapi-${version}.json and ${changelogName}; commit both.`,
  );
} else {
  if (breaking.length > 0)
    console.error(
      `Left out ${breaking.length} breaking change(s); \`npm run spec:breaking -- --surface ${surface}\` lists them.`,
    );
  if (updated !== changelog) writeFileSync(changelogFile, updated);
  console.log(
    `${updated === changelog ? `${changelogName} was up to date` : `wrote ${changelogName}`}: ${changes.length - breaking.length} compatible change(s) since ${latest}.`,
  );
}
