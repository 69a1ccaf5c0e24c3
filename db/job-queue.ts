// The job engine: pg-boss 10 (PostgreSQL-backed jobs: SKIP LOCKED fetches, retries, expiry of jobs whose process
// died), run over our own Kysely instance on both engines, PostgreSQL and embedded PGlite, through pg-boss's custom
// `db` executor. It shares the pool and its timeouts, and a job can be sent inside a caller's transaction
// (`{ db: jobExecutor(trx) }`), so it exists exactly when the change that calls for it commits.
//
// pg-boss creates and migrates its own schema (`pgboss`): `prepareJobQueues` runs its start-up migration and creates
// our queues, after our own migrations (db/migrate.ts). Processes starting together are safe: pg-boss takes an
// advisory lock around its DDL, and a server's start runs this under the start-up lock (db/startup-lock.ts).
import { CompiledQuery } from 'kysely';
import PgBoss from 'pg-boss';
import { embeddedDatabaseOf, type Db } from './connect.ts';

/** Webhook attempts (services/webhooks/): one job per attempt, data `{ delivery_id, due }`, singleton key the delivery. */
export const WEBHOOK_DELIVERY_QUEUE = 'webhook-delivery';

/**
 * 'standard': the singleton key only names the delivery. One attempt at a time per endpoint, hence per delivery,
 * is the endpoint's gate's work (services/webhooks/gate.ts), not pg-boss's: in pg-boss 10 a job whose singleton key
 * is already active, once it is next in line, makes every fetch of the queue fail (a unique violation) until that
 * job ends, so one slow receiver would stall every delivery.
 */
export const WEBHOOK_DELIVERY_QUEUE_OPTIONS = { name: WEBHOOK_DELIVERY_QUEUE, policy: 'standard' } as const;

export type JobExecutor = PgBoss.Db;

/**
 * pg-boss's statements through Kysely. A statement without parameters may be a script (pg-boss's DDL: several
 * statements inside BEGIN … COMMIT): PGlite runs those with `exec` (its `query` takes one statement), on one
 * connection that a failed script leaves rolled back rather than inside an aborted transaction.
 */
export function jobExecutor(db: Db): JobExecutor {
  return {
    async executeSql(text: string, values?: unknown[]) {
      if (values && values.length > 0) return db.executeQuery(CompiledQuery.raw(text, values));
      const pglite = embeddedDatabaseOf(db);
      return db.connection().execute(async (connection) => {
        try {
          if (!pglite) return await connection.executeQuery(CompiledQuery.raw(text, []));
          // PGlite serialises its callers itself (Kysely's transactions use its exclusive transaction lock).
          const results = await pglite.exec(text);
          return { rows: results.at(-1)?.rows ?? [] };
        } catch (error) {
          await (pglite ? pglite.exec('ROLLBACK') : connection.executeQuery(CompiledQuery.raw('ROLLBACK', []))).catch(
            () => {},
          );
          throw error;
        }
      });
    },
  };
}

/** pg-boss over `db` (no cron: nothing here is scheduled by the clock); maintenance runs where `supervise` says. */
export function jobEngine(db: Db, options: Partial<PgBoss.ConstructorOptions> = {}): PgBoss {
  return new PgBoss({ schedule: false, supervise: false, migrate: false, ...options, db: jobExecutor(db) });
}

/** Creates or migrates pg-boss's schema, then creates our queues that are missing. */
export async function prepareJobQueues(db: Db): Promise<void> {
  const boss = jobEngine(db, { migrate: true });
  await boss.start();
  try {
    if (!(await boss.getQueue(WEBHOOK_DELIVERY_QUEUE)))
      await boss.createQueue(WEBHOOK_DELIVERY_QUEUE, WEBHOOK_DELIVERY_QUEUE_OPTIONS);
  } finally {
    await boss.stop({ graceful: false, close: false });
  }
}
