// npm run spec:breaking [-- --current FILE] [-- --released FILE]
// Fails when the current partner spec (generated/partner-v1/openapi.json) breaks clients of the last released one
// (the newest spec/partner-v1/released/openapi-<version>.json), naming every break. CI runs it.
import { fileURLToPath } from 'node:url';
import { compareSpecs, CURRENT_SPEC, readJson, RELEASED_DIR, releasedVersions, versionProblems } from './spec-diff.ts';
import { option } from './spec-args.ts';

const latest = releasedVersions().at(-1);
const releasedFile = option('--released') ?? (latest && fileURLToPath(new URL(`openapi-${latest}.json`, RELEASED_DIR)));
if (!releasedFile) throw new Error(`no released snapshot in ${fileURLToPath(RELEASED_DIR)}`);
const released = readJson(releasedFile);
const current = readJson(option('--current') ?? CURRENT_SPEC);

const changes = compareSpecs(released, current);
const breaks = [...changes.filter((c) => c.class === 'breaking').map((c) => c.message), ...versionProblems(released.info.version, current.info.version)];
if (breaks.length > 0) {
  console.error(`The partner spec breaks v1 as released in ${released.info.version} (${breaks.length}):`);
  for (const message of breaks) console.error(`  - ${message}`);
  console.error('v1 is locked: restore what was removed or narrowed, or add the new thing as optional.');
  process.exit(1);
}
const others = changes.length;
console.log(`No breaking change against partner v1 ${released.info.version}` + (others ? `; ${others} compatible change(s), see \`npm run spec:changelog\`.` : '.'));
