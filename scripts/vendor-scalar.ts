// npm run vendor:scalar -- VERSION
// Replaces the rendered reference's browser bundle, docs/vendor/scalar-api-reference/standalone.js, with the one a
// release of @scalar/api-reference publishes, and records where it came from (source.json). The project serves only
// that prebuilt file and runs none of the package's Node code; installing the package would bring ~25 packages whose
// current releases declare Node >= 22, each an EBADENGINE warning on every `npm ci`, and its releases that declare
// Node 20 render every operation before showing any (tens of seconds on the general reference).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SCALAR_PACKAGE, SCALAR_SCRIPT, SCALAR_SOURCE } from '../server/contract/scalar-bundle.ts';

const version = process.argv[2];
if (!version || !/^\d+\.\d+\.\d+$/.test(version)) {
  process.stderr.write('usage: npm run vendor:scalar -- VERSION (e.g. 1.72.1)\n');
  process.exit(2);
}
const work = mkdtempSync(join(tmpdir(), 'scalar-'));
try {
  const [packed] = JSON.parse(
    execFileSync('npm', ['pack', `${SCALAR_PACKAGE}@${version}`, '--json', '--pack-destination', work], {
      encoding: 'utf8',
    }),
  ) as { filename: string; integrity: string }[];
  execFileSync('tar', [
    '-xzf',
    join(work, packed!.filename),
    '-C',
    work,
    'package/package.json',
    'package/dist/browser/standalone.js',
  ]);
  const manifest = JSON.parse(readFileSync(join(work, 'package/package.json'), 'utf8')) as { license: string };
  const bundle = readFileSync(join(work, 'package/dist/browser/standalone.js'));
  writeFileSync(SCALAR_SCRIPT, bundle);
  const source = {
    package: SCALAR_PACKAGE,
    version,
    license: manifest.license,
    tarballIntegrity: packed!.integrity,
    file: 'dist/browser/standalone.js',
    sha256: createHash('sha256').update(bundle).digest('hex'),
  };
  writeFileSync(SCALAR_SOURCE, `${JSON.stringify(source, null, 2)}\n`);
  console.log(`wrote ${SCALAR_SCRIPT} from ${SCALAR_PACKAGE}@${version} (${source.license})`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
