// The repository's docs/: the guides (docs/*.md) and the reference's vendored renderer (docs/vendor/). Found upward
// from this module, which runs from server/contract/ under tsx and from dist/ once bundled (app/start.mjs): the
// project root is the first directory up with a package.json.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function docsDirectory(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return join(dir, 'docs');
    if (dirname(dir) === dir) throw new Error(`no package.json above ${fileURLToPath(import.meta.url)}`);
  }
}
