// npm start: migrate, load reference data into an empty database (and demo data when it is embedded), serve, and stop
// gracefully on SIGTERM/SIGINT. With WEB_CONCURRENCY above 1 on PostgreSQL, this process becomes a cluster primary
// (server/cluster.ts) that prepares the database once and forks that many workers, each of which runs this file
// again and only serves. A start-up that fails prints one line saying why and exits 1.
import cluster from 'node:cluster';
import { createServer } from 'node:http';
import { assertDatabaseReachable, cliEnvironmentFor, connect, describeTarget, type Db } from '../db/connect.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { findCredentials } from '../db/queries/profile.ts';
import { DEMO_SEED, isEmpty, seedDemo, seedReference } from '../db/seed/index.ts';
import { whileHoldingStartupLock } from '../db/startup-lock.ts';
import { tutorFromConfig } from '../handlers/general/tutor/index.ts';
import { createApp } from './app.ts';
import { accessTokenIssuer } from './auth/access-tokens.ts';
import { issueApiKey } from './auth/api-keys.ts';
import { signingKeysFor } from './auth/signing-key-store.ts';
import { runPrimary } from './cluster.ts';
import { loadConfig, type Config } from './config.ts';
import { createDemoStudent, DEMO_STUDENT } from './demo-student.ts';
import { createLifecycle, stopOnSignals } from './lifecycle.ts';
import { createLogger } from './logger.ts';
import { collectProcessMetrics, metricsRegistry, observePool } from './metrics.ts';
import { metricsUrl, serveMetrics } from './metrics-server.ts';
import { memoryLimitStores, redisLimitStores } from './rate-limits.ts';
import { secretBox } from './secret-box.ts';
import { secretsKeyFor } from './secrets-key.ts';
import { describeStartupError } from './startup-errors.ts';

/** Secrets printed once, on the first start of an embedded database. */
interface Demo {
  partnerKey: string;
  student: Awaited<ReturnType<typeof createDemoStudent>>;
}

let config: Config;
try {
  config = loadConfig();
} catch (error) {
  failStart(describeStartupError(error, {}));
}
const logger = createLogger(config.logLevel);
const embedded = !('databaseUrl' in config.database);
const clustered = config.webConcurrency > 1 && !embedded;
if (config.webConcurrency > 1 && embedded && cluster.isPrimary) {
  process.stderr.write(`WEB_CONCURRENCY=${config.webConcurrency} ignored: the embedded database serves from one process; set DATABASE_URL (PostgreSQL) to run several\n`);
}
let db: Db | undefined;
try {
  const database = connect(config.database, {
    timeouts: config.databaseTimeouts,
    onConnectionError: (error) => logger.warn(error, 'a database connection failed; the pool replaces it'),
    observePool,
  });
  db = database;
  // Checked first, so an unreachable database stops the start within seconds, with one clear line.
  await assertDatabaseReachable(database, config.database, config.databaseTimeouts.connectMs);
  if (cluster.isWorker) {
    await serve(database, undefined);
  } else {
    const demo = await prepareDatabase(database);
    if (clustered) {
      // The first signing key is made here, once, rather than by workers racing each other.
      (await signingKeysFor(config, database, () => {})).stop();
      await database.destroy();
      await runPrimary({ config, logger, banner: (port, metricsUrl) => banner(port, undefined, metricsUrl) });
    } else {
      await serve(database, demo);
    }
  }
} catch (error) {
  logger.debug({ err: error }, 'could not start');
  await db?.destroy().catch(() => {});
  failStart(describeStartupError(error, { database: config.database, port: config.port }));
}

/**
 * Migrations and reference data, by one process at a time (a PostgreSQL advisory lock), then demo data on the
 * embedded database.
 */
async function prepareDatabase(db: Db): Promise<Demo | undefined> {
  const now = new Date();
  await whileHoldingStartupLock(db, embedded, async (locked) => {
    const applied = await migrateToLatest(locked);
    if (applied.length > 0) logger.info({ migrations: applied }, 'migrated');
    // Reference data is loaded on the first start only. Later releases' reference data arrives with `npm run cli -- seed`.
    if (await isEmpty(locked)) await seedReference(locked, { now });
  });
  // Demo data goes into an embedded database that has no users yet; the demo keys and the demo student follow
  // whenever the demo student is missing, so a first start interrupted at any step completes on the next one.
  if (!embedded) return undefined;
  await seedDemo(db, { seed: DEMO_SEED, now });
  if (await findCredentials(db, DEMO_STUDENT.email)) return undefined;
  return { partnerKey: (await issueApiKey(db, { name: 'demo key (first start)' })).key, student: await createDemoStudent(db, now) };
}

async function serve(db: Db, demo: Demo | undefined): Promise<void> {
  const signingKeys = await signingKeysFor(config, db, (error) => logger.warn({ err: error }, 'could not re-read the signing keys; verifying with the set already known'));
  const tokens = accessTokenIssuer(signingKeys, { issuer: config.publicUrl, now: () => new Date() });
  const limitStores = config.redisUrl
    ? await redisLimitStores(config.redisUrl, { keyPrefix: config.redisKeyPrefix, timeoutMs: config.redisTimeoutMs, logger })
    : memoryLimitStores();
  const tutor = tutorFromConfig(config.ai);
  collectProcessMetrics();
  const lifecycle = createLifecycle();
  const webhooks = { secrets: secretBox(secretsKeyFor(config)), targets: { allowPrivate: config.webhooks.allowPrivateTargets } };
  const app = await createApp({ db, logger, limitStores, tokens, tutor, webhooks, config, lifecycle });
  const server = createServer(app);
  // Express's app.listen hands a listen error (EADDRINUSE) to its callback, where it is easily lost; a plain
  // server rejects here instead, and the start fails with one line.
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, () => (server.off('error', reject), resolve()));
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  logger.info({ port, database: describeTarget(config.database), sharedLimits: Boolean(config.redisUrl), tutor: tutor.model }, 'listening');
  // In a cluster the primary serves the workers' metrics, aggregated, and prints the banner.
  const metricsServer = config.metrics && !cluster.isWorker ? await serveMetrics(config.metrics, () => metricsRegistry.metrics(), metricsRegistry.contentType) : undefined;
  if (!cluster.isWorker) process.stderr.write(banner(port, demo, metricsServer && metricsUrl(metricsServer)) + '\n');

  stopOnSignals(server, lifecycle, {
    drainMs: config.shutdownDrainSeconds * 1000,
    deadlineMs: config.shutdownGraceSeconds * 1000,
    logger,
    release: () => {
      signingKeys.stop();
      metricsServer?.close();
      return Promise.allSettled([db.destroy(), limitStores.close()]);
    },
  });
}

/** What a person starting the service reads first: where it listens and how to try it. */
function banner(port: number, demo: Demo | undefined, metricsAt: string | undefined): string {
  const base = `http://localhost:${port}`;
  // Hints name the database they act on: a bare `npm run cli` would write into the embedded one.
  const cli = `${cliEnvironmentFor(config.database)}npm run cli --`;
  const processes = clustered ? `, ${config.webConcurrency} processes` : '';
  return [
    `study-companion-api listening on ${base}  (${describeTarget(config.database)}${processes})`,
    `  docs: ${base}/docs (general)  ${base}/api/v1/docs (partner)`,
    `  partner API v1: ${base}/api/v1/health`,
    ...(metricsAt ? [`  metrics (Prometheus): ${metricsAt}`] : []),
    demo
      ? `  demo partner key (shown once, stored only as a hash):\n    ${demo.partnerKey}\n  try: curl -H "X-Service-API-Key: ${demo.partnerKey}" ${base}/api/v1/universities?limit=3`
      : `  create a partner key: ${cli} keys create --name "my key"${embedded ? '  (stop the server first)' : ''}`,
    demo
      ? `  demo student ${demo.student.email}, password ${demo.student.password} (sign in at ${base}/oauth/authorize)\n` +
        `  demo student's personal API key, every scope (shown once):\n    ${demo.student.key}\n` +
        `  try: curl -H "X-Service-API-Key: ${demo.student.key}" ${base}/api/today/loop`
      : `  create a student: ${cli} users create --email you@example.com --nickname you`,
  ].join('\n');
}

function failStart(line: string): never {
  process.stderr.write(`could not start: ${line}\n`);
  process.exit(1);
}
