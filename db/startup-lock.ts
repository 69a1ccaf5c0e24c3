// Preparing a database at start-up (migrations, then reference data into an empty one) happens once, in one
// process: several processes starting together on PostgreSQL queue on a session-level advisory lock, and each
// one after the first finds the work done. The embedded database needs no lock: its directory admits one process.
import { sql } from 'kysely';
import type { Db } from './connect.ts';

/** An arbitrary constant that names this lock among the advisory locks of the database. */
const STARTUP_LOCK_ID = 727_110_011;

export async function whileHoldingStartupLock<T>(db: Db, embedded: boolean, run: (db: Db) => Promise<T>): Promise<T> {
  if (embedded) return run(db);
  // A session lock belongs to one connection: take it, do the work and release it on that same connection.
  return db.connection().execute(async (connection) => {
    await sql`select pg_advisory_lock(${STARTUP_LOCK_ID})`.execute(connection);
    try {
      return await run(connection);
    } finally {
      await sql`select pg_advisory_unlock(${STARTUP_LOCK_ID})`.execute(connection);
    }
  });
}
