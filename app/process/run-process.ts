// One process's start, whatever its role: the database reached, Redis reached, the database prepared once, then
// serving, delivering only, or forking a cluster's workers. Anything that fails on the way closes what was opened and
// rejects; the entry (app/main.ts) turns that into one line.
import cluster from 'node:cluster';
import { assertDatabaseReachable, connect, describeTarget, statementTimeoutMs, type Db } from '../../db/connect.ts';
import { memoryLimitStores, type LimitStores } from '../../server/limits/rate-limits.ts';
import { observePool } from '../../server/process/metrics.ts';
import { banner } from './banner.ts';
import { runPrimary } from './cluster-primary.ts';
import type { ProcessContext } from './context.ts';
import { deliverOnly } from './deliver-only.ts';
import { prepareDatabase } from './prepare-database.ts';
import { servesHttp } from './role.ts';
import { serve } from './serve.ts';

export async function runProcess(context: ProcessContext): Promise<void> {
  const { config, logger, role, dataDir } = context;
  if (config.webConcurrency > 1 && context.embedded && cluster.isPrimary) {
    process.stderr.write(
      `WEB_CONCURRENCY=${config.webConcurrency} ignored: the embedded database serves from one process; set DATABASE_URL (PostgreSQL) to run several\n`,
    );
  }
  let db: Db | undefined;
  let limitStores: LimitStores | undefined;
  try {
    context.progress(
      context.firstStart
        ? `creating the embedded database in ${dataDir}/ (first start only)`
        : `opening ${describeTarget(config.database)}`,
    );
    const database = connect(config.database, {
      timeouts: config.databaseTimeouts,
      onConnectionError: (error) => logger.warn(error, 'a database connection failed; the pool replaces it'),
      observePool,
      notifyAfterCommit: {
        onError: (error) =>
          logger.warn(
            { err: error },
            'could not send the notifications of a commit; their readers catch up by themselves',
          ),
      },
      onModesTightened: (entries) =>
        logger.warn(
          { entries },
          `${entries} files and directories of the embedded database other users could reach are now owner-only ` +
            `(${dataDir}/ and the template cache)`,
        ),
    });
    db = database;
    // Checked first, so an unreachable database stops the start within seconds, with one clear line.
    await assertDatabaseReachable(database, config.database, config.databaseTimeouts.connectMs);
    if (
      'databaseUrl' in config.database &&
      config.database.transactionPooler &&
      !cluster.isWorker &&
      (await statementTimeoutMs(database)) === 0
    ) {
      logger.warn(
        'statements through the pooler run without a statement_timeout (DATABASE_STATEMENT_TIMEOUT_MS cannot be sent through it): set one on the role (ALTER ROLE … SET statement_timeout) or in the pooler (connect_query)',
      );
    }
    // Redis too, before anything is migrated or seeded: a mistyped REDIS_URL leaves the database as it was. A
    // cluster's primary checks it for the workers it forks, and closes it again; a worker-role process never uses it.
    const stores = servesHttp(role) ? await openLimitStores(context) : undefined;
    limitStores = stores;
    if (cluster.isWorker) return await serve(context, database, undefined, stores!);
    const demo = await prepareDatabase(context, database);
    if (!stores) return await deliverOnly(context, database);
    if (!context.clustered) return await serve(context, database, demo, stores);
    await Promise.all([database.destroy(), stores.close()]);
    await runPrimary({ config, logger, banner: (port, metricsUrl) => banner(context, port, undefined, metricsUrl) });
  } catch (error) {
    logger.debug({ err: error }, 'could not start');
    await Promise.allSettled([db?.destroy(), limitStores?.close()]);
    throw error;
  }
}

/**
 * The rate-limit stores: Redis with REDIS_URL, reached (and answering a PING) within REDIS_TIMEOUT_MS or the start
 * fails with one line; in this process's memory otherwise. The Redis client is loaded only with REDIS_URL (~0.3 s of
 * every embedded start otherwise), and before the bounded connection attempt starts, so that loading it never counts
 * against REDIS_TIMEOUT_MS.
 */
async function openLimitStores({ config, logger }: ProcessContext): Promise<LimitStores> {
  if (!config.redisUrl) return memoryLimitStores();
  const { redisLimitStores } = await import('../../server/limits/redis-limit-stores.ts');
  return redisLimitStores(config.redisUrl, {
    keyPrefix: config.redisKeyPrefix,
    timeoutMs: config.redisTimeoutMs,
    logger,
  });
}
