// The embedded database's vacuum. PGlite runs PostgreSQL in this process, in WebAssembly, with no background workers:
// no autovacuum. Every UPDATE leaves the row's old version and new index entries behind (a student's users row on
// each review or task, a card's row on each review, an event's when it is fanned out), and nothing clears them: the
// same lookups then read more and more pages (test/db/embedded-vacuum.test.ts holds a pass to undoing that;
// docs/performance.md has what it cost on PostgreSQL with autovacuum off).
//
// So a process on the embedded database vacuums the service's tables itself, every EMBEDDED_VACUUM_EVERY_MS, one table
// per statement. PGlite executes on the main thread, so a statement's run is a stall of every request; one VACUUM of
// the whole database would be one long stall, one per table is a short one each, with the event loop given back in
// between (pending requests run between two tables). Plain VACUUM: it frees dead versions for reuse and sets the
// visibility map without rewriting a table or taking a lock that blocks reads or writes. Not ANALYZE: the planner's
// statistics, and so the plans of the hot statements, stay what they were without it.
//
// On PostgreSQL the server's autovacuum does this work, and nothing here starts.
import type { Logger } from 'pino';
import { embeddedDatabaseOf, type Db } from '../../db/connect.ts';
import { listServiceTables, vacuumTable } from '../../db/queries/maintenance.ts';
import type { Lifecycle } from '../../server/process/lifecycle.ts';

/**
 * How often the embedded database is vacuumed, and how long after the start the first pass comes. The degradation
 * takes thousands of updates of the same rows (hours of one student's use), and a pass over the embedded database's
 * few megabytes costs about a millisecond a table: ten minutes keeps the dead versions a busy student leaves between
 * two passes to hundreds, at a cost nobody notices, and the first pass away from the start's own work.
 */
export const EMBEDDED_VACUUM_EVERY_MS = 10 * 60_000;

export interface VacuumPass {
  /** Tables vacuumed. */
  tables: number;
  /** Tables listed: more than `tables` when the pass stopped early (the process is stopping). */
  listed: number;
  /** Wall time of the pass, the yields between tables included. */
  ms: number;
}

/**
 * One VACUUM of each of the service's tables (db/queries/maintenance.ts), one statement per table, with the event loop
 * given back between two tables; `stopping` is asked before each table, and a true ends the pass there.
 */
export async function vacuumEmbeddedOnce(db: Db, stopping: () => boolean = () => false): Promise<VacuumPass> {
  const started = performance.now();
  const tables = await listServiceTables(db);
  let done = 0;
  for (const table of tables) {
    if (stopping()) break;
    await vacuumTable(db, table);
    done += 1;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return { tables: done, listed: tables.length, ms: Math.round(performance.now() - started) };
}

export interface EmbeddedVacuum {
  /** No pass starts from now on; resolves once the running one (if any) has ended (it ends at its next table). */
  stop(): Promise<void>;
}

/**
 * Vacuums the embedded database every `everyMs` (the first pass `firstAfterMs` after this call), until the lifecycle
 * drains or stop() is called. A pass that fails is logged and the next one comes on time; nothing here ends the
 * process. Undefined on PostgreSQL: its autovacuum does the work.
 */
export function startEmbeddedVacuum(options: {
  db: Db;
  lifecycle: Lifecycle;
  logger: Logger;
  everyMs?: number;
  firstAfterMs?: number;
}): EmbeddedVacuum | undefined {
  const { db, lifecycle, logger, everyMs = EMBEDDED_VACUUM_EVERY_MS, firstAfterMs = everyMs } = options;
  if (!embeddedDatabaseOf(db)) return undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  const stopping = () => stopped || lifecycle.draining;

  const pass = async () => {
    const done = await vacuumEmbeddedOnce(db, stopping);
    if (done.tables === done.listed)
      logger.info({ tables: done.tables, ms: done.ms }, 'vacuumed the embedded database');
    else
      logger.info(
        { tables: done.tables, listed: done.listed, ms: done.ms },
        'vacuum of the embedded database cut short: the process is stopping',
      );
  };
  const run = () => {
    if (stopping()) return;
    running = lifecycle
      .hold(pass())
      .catch((error: unknown) =>
        logger.warn({ err: error }, 'could not vacuum the embedded database; trying again at the next pass'),
      )
      .then(() => {
        running = undefined;
        if (!stopping()) timer = setTimeout(run, everyMs);
      });
  };
  timer = setTimeout(run, firstAfterMs);

  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
