// npm run docs [-- --out DIR]
// Builds the rendered docs as static, publishable files, one folder per generated surface:
// DIR/<surface>/{index.html, openapi.json, standalone.js} (DIR defaults to docs-dist/). Any static host serves
// them; they need no network. The page is the same template the running service serves at /docs and /api/v1/docs.
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { bundledSpecs } from '../server/contract/bundled-specs.ts';
import { MOCK_SERVER, SCALAR_SCRIPT, docsPage, docsTitle, specServers } from '../server/contract/docs.ts';

const { values } = parseArgs({ options: { out: { type: 'string', default: 'docs-dist' } } });
const outDir = resolve(values.out);

const specs = bundledSpecs();
if (specs.length === 0) throw new Error('no generated/<surface>/openapi.json; run `npm run generate` first');
for (const spec of specs) {
  const dir = join(outDir, spec.surface);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  copyFileSync(spec.file, join(dir, 'openapi.json'));
  copyFileSync(SCALAR_SCRIPT, join(dir, 'standalone.js'));
  writeFileSync(
    join(dir, 'index.html'),
    docsPage({ title: docsTitle(spec), specUrl: './openapi.json', scriptUrl: './standalone.js', servers: [...specServers(spec), MOCK_SERVER] }),
  );
  console.log(`wrote ${join(dir, 'index.html')}`);
}
