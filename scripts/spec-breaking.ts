// npm run spec:breaking [-- --surface general|partner-v1] [-- --current FILE] [-- --released FILE]
// Fails when a surface's current spec (generated/<surface>/openapi.json; partner-v1 by default) breaks clients of
// its last released one (the newest spec/<surface>/released/openapi-<version>.json), naming every break. CI runs it
// for both surfaces.
import { fileURLToPath } from 'node:url';
import {
  compareSpecs,
  currentSpecOf,
  readJson,
  releasedDirOf,
  releasedVersions,
  versionProblems,
} from './spec-diff.ts';
import { option, surfaceOption } from './spec-args.ts';

const surface = surfaceOption();
const name = surface === 'partner-v1' ? 'partner v1' : `the ${surface} surface`;
const releasedDir = releasedDirOf(surface);
const latest = releasedVersions(releasedDir).at(-1);
const releasedFile = option('--released') ?? (latest && fileURLToPath(new URL(`openapi-${latest}.json`, releasedDir)));
if (!releasedFile) throw new Error(`no released snapshot in ${fileURLToPath(releasedDir)}`);
const released = readJson(releasedFile);
const current = readJson(option('--current') ?? currentSpecOf(surface));

const changes = compareSpecs(released, current);
const breaks = [
  ...changes.filter((c) => c.class === 'breaking').map((c) => c.message),
  ...versionProblems(released.info.version, current.info.version),
];
if (breaks.length > 0) {
  console.error(`The ${surface} spec breaks ${name} as released in ${released.info.version} (${breaks.length}):`);
  for (const message of breaks) console.error(`  - ${message}`);
  console.error(`${name} is locked: restore what was removed or narrowed, or add the new thing as optional.`);
  process.exit(1);
}
const others = changes.length;
console.log(
  `No breaking change against ${name} ${released.info.version}` +
    (others ? `; ${others} compatible change(s), see \`npm run spec:changelog -- --surface ${surface}\`.` : '.'),
);
