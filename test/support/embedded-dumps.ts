// Where the dumps of the embedded database that test processes load into memory (test-db.ts) are kept: beside the
// server's template in node_modules/.cache (db/pglite-template.ts), one file per state, keyed as the template is (a
// changed migration, PGlite or pg-boss version makes a new template, and the old one's dumps go with it). Apart from
// test-db.ts, so that the run's start (run-gate.ts) can look for them without loading PGlite.
import { existsSync } from 'node:fs';
import { cachedTemplate } from '../../db/pglite-template.ts';

export type DumpState = 'unmigrated' | 'migrated';
export const DUMP_STATES: readonly DumpState[] = ['unmigrated', 'migrated'];

/** The dump's file, whether it exists yet or not; undefined when the cache cannot be written. */
export function dumpFile(state: DumpState): string | undefined {
  const template = cachedTemplate();
  return template && `${template}.${state}.tar`;
}

/** Whether some dump is still to be made (and can be kept). */
export function dumpsMissing(): boolean {
  return DUMP_STATES.some((state) => {
    const file = dumpFile(state);
    return file !== undefined && !existsSync(file);
  });
}
