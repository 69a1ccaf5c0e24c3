// Preparing a database at start-up (migrations, then reference data into an empty one) happens once, in one
// process: several processes starting together on PostgreSQL queue on a session-level advisory lock, and each
// one after the first finds the work done. The embedded database needs no lock: its directory admits one process.
//
// A session lock belongs to one server connection, so it is taken on a connection of its own to the session URL
// (db/connect.ts): through a transaction-mode pooler the lock, the work and the unlock could each land on another
// server connection, and a lock left on a pooled connection would hold every later start forever.
import { sql } from 'kysely';
import { connect, sessionUrlOf, type Db, type DbTarget } from './connect.ts';
import { type DatabaseTimeouts } from './database-timeouts.ts';

/** An arbitrary constant that names this lock among the advisory locks of the database. */
const STARTUP_LOCK_ID = 727_110_011;

export async function whileHoldingStartupLock<T>(
  db: Db,
  target: DbTarget,
  timeouts: DatabaseTimeouts | undefined,
  run: (db: Db) => Promise<T>,
): Promise<T> {
  if (!('databaseUrl' in target)) return run(db);
  const session = connect({ databaseUrl: sessionUrlOf(target) }, { ...(timeouts && { timeouts }) });
  try {
    return await session.connection().execute(async (connection) => {
      await sql`select pg_advisory_lock(${STARTUP_LOCK_ID})`.execute(connection);
      try {
        return await run(connection);
      } finally {
        await sql`select pg_advisory_unlock(${STARTUP_LOCK_ID})`.execute(connection);
      }
    });
  } finally {
    await session.destroy();
  }
}
