// Probes for load balancers and orchestrators, outside both API surfaces: no credentials, no limits, no logs at
// info level. GET /livez: the process answers (restart it when it does not). GET /readyz: send it traffic — the
// database answers and its migrations are current, Redis answers (when configured), and the process is not
// draining for a stop. 200 or 503, with every check named in the body.
import { Router, type Response } from 'express';
import { sql } from 'kysely';
import type { Db } from '../db/connect.ts';
import { migrations } from '../db/migrations/index.ts';
import type { Lifecycle } from '../server/process/lifecycle.ts';
import type { LimitStores } from '../server/limits/rate-limits.ts';
import { withTimeout } from '../server/process/timeout.ts';

export const PROBE_PATHS: ReadonlySet<string> = new Set(['/livez', '/readyz']);

/** Per dependency; below the 1 s that Kubernetes gives a probe by default, so a slow check reads as "not ready". */
const CHECK_TIMEOUT_MS = 500;

export interface ProbeDeps {
  db: Db;
  /** Redis is a readiness check only when the limit counters live there (REDIS_URL). */
  limitStores: LimitStores;
  lifecycle: Lifecycle;
}

type Check = 'ok' | 'draining' | 'unreachable' | 'pending' | 'unknown' | 'not_configured';

export interface Readiness {
  status: 'ready' | 'not_ready';
  checks: { accepting: Check; database: Check; migrations: Check; redis: Check };
}

export function probeRoutes(deps: ProbeDeps): Router {
  const router = Router();
  const readiness = readinessCheck(deps);
  router.get('/livez', (_req, res) => noStore(res).json({ status: 'ok' }));
  router.get('/readyz', async (_req, res) => {
    const result = await readiness();
    noStore(res)
      .status(result.status === 'ready' ? 200 : 503)
      .json(result);
  });
  return router;
}

function noStore(res: Response): Response {
  return res.set('Cache-Control', 'no-store');
}

export function readinessCheck({ db, limitStores, lifecycle }: ProbeDeps): () => Promise<Readiness> {
  // One database check at a time: probes from several balancers must not pile up on a database that hangs.
  let schemaCheck: Promise<Pick<Readiness['checks'], 'database' | 'migrations'>> | undefined;
  const checkSchema = () =>
    (schemaCheck ??= withTimeout(appliedMigrations(db), CHECK_TIMEOUT_MS, 'the database')
      .then((applied) => ({
        database: 'ok' as const,
        migrations: Object.keys(migrations).every((name) => applied.has(name)) ? ('ok' as const) : ('pending' as const),
      }))
      .catch(() => ({ database: 'unreachable' as const, migrations: 'unknown' as const }))
      .finally(() => (schemaCheck = undefined)));
  const checkRedis = (): Promise<Check> =>
    limitStores.shared
      ? limitStores.ping(CHECK_TIMEOUT_MS).then(
          () => 'ok',
          () => 'unreachable',
        )
      : Promise.resolve('not_configured');

  return async () => {
    const [schema, redis] = await Promise.all([checkSchema(), checkRedis()]);
    const checks = { accepting: lifecycle.draining ? ('draining' as const) : ('ok' as const), ...schema, redis };
    const ready = Object.values(checks).every((check) => check === 'ok' || check === 'not_configured');
    return { status: ready ? 'ready' : 'not_ready', checks };
  };
}

/** The names of the migrations the database has applied (Kysely's own table), in one round trip. */
async function appliedMigrations(db: Db): Promise<Set<string>> {
  const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
  return new Set(rows.map((row) => row.name));
}
