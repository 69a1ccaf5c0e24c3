// The bundled specs that `npm run generate` has written: one per surface of scripts/surfaces.ts. The docs, the
// mock server and their tests all work from this list, so a new surface shows up in each once it is generated.
import { existsSync, readFileSync } from 'node:fs';
import type { Document } from 'openapi-backend';
import { surfaces, type Surface } from '../scripts/surfaces.ts';

export interface BundledSpec {
  surface: Surface;
  /** Absolute path of generated/<surface>/openapi.json. */
  file: string;
  definition: Document;
}

export function bundledSpecFile(surface: Surface): string {
  return new URL(`../generated/${surface}/openapi.json`, import.meta.url).pathname;
}

/** Every surface whose bundled spec exists, in the order of scripts/surfaces.ts. */
export function bundledSpecs(): BundledSpec[] {
  return surfaces
    .map((surface) => ({ surface, file: bundledSpecFile(surface) }))
    .filter(({ file }) => existsSync(file))
    .map(({ surface, file }) => ({ surface, file, definition: JSON.parse(readFileSync(file, 'utf8')) as Document }));
}
