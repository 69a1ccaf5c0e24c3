// The bundled specs that `npm run generate` has written: one per surface of server/contract/surfaces.ts. The docs, the
// mock server and their tests all work from this list, so a new surface shows up in each once it is generated.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Document } from 'openapi-backend';
import { surfaces, type Surface } from './surfaces.ts';

export interface BundledSpec {
  surface: Surface;
  /** Absolute path of generated/<surface>/openapi.json. */
  file: string;
  definition: Document;
}

/**
 * The project's generated/, found upward from this module: it runs from server/contract/ under tsx and from dist/ once
 * bundled (app/start.mjs), two depths apart.
 */
const GENERATED_DIR = (() => {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'generated'))) return join(dir, 'generated');
    if (dirname(dir) === dir)
      throw new Error(`no generated/ above ${fileURLToPath(import.meta.url)}: run npm run generate`);
  }
})();

export function bundledSpecFile(surface: Surface): string {
  return join(GENERATED_DIR, surface, 'openapi.json');
}

/** Every surface whose bundled spec exists, in the order of server/contract/surfaces.ts. */
export function bundledSpecs(): BundledSpec[] {
  return surfaces
    .map((surface) => ({ surface, file: bundledSpecFile(surface) }))
    .filter(({ file }) => existsSync(file))
    .map(({ surface, file }) => ({ surface, file, definition: JSON.parse(readFileSync(file, 'utf8')) as Document }));
}
