// npm start: migrate, load reference data into an empty database (and demo data when it is embedded), serve, and stop
// gracefully on SIGTERM/SIGINT. With WEB_CONCURRENCY above 1 on PostgreSQL, this process becomes a cluster primary
// (app/cluster.ts) that prepares the database once and forks that many workers, each of which runs this file
// again and only serves. `--role web|worker` (app/process-role.ts) splits serving the API from delivering
// webhooks; the default does both. A start-up that fails prints one line saying why and exits 1.
import cluster from 'node:cluster';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import {
  assertDatabaseReachable,
  cliEnvironmentFor,
  connect,
  describeTarget,
  sessionUrlOf,
  statementTimeoutMs,
  type Db,
} from '../db/connect.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { findCredentials } from '../db/queries/profile.ts';
import { OWNER_ONLY_UMASK } from '../db/private-files.ts';
import { DEMO_SEED, isEmpty, seedDemo, seedReference } from '../db/seed/index.ts';
import { whileHoldingStartupLock } from '../db/startup-lock.ts';
import { tutorFromConfig } from '../services/ai/tutor/index.ts';
import { createAiQueue } from '../services/ai/queue.ts';
import { createExportLimits } from '../services/exports/export-limits.ts';
import { createApp } from './app.ts';
import { accessTokenIssuer } from '../server/auth/access-tokens.ts';
import { issueApiKey } from '../server/auth/api-keys.ts';
import { signingKeysFor } from '../server/auth/signing-key-store.ts';
import { runPrimary } from './cluster.ts';
import { loadConfig, type Config } from './config.ts';
import { createDemoStudent, DEMO_STUDENT, FIRST_START_KEY_NAME, type DemoCredentials } from './demo-student.ts';
import { serveCliSocket } from './cli/server-socket.ts';
import { requestTimeoutOptions } from '../server/http/request-timeout.ts';
import { answerClientErrors } from '../server/http/client-errors.ts';
import { notificationsFor, type Notifications } from '../db/notifications.ts';
import { createLifecycle, stopOnSignals, type LifecycleControl } from '../server/process/lifecycle.ts';
import { createLogger } from '../server/process/logger.ts';
import { collectProcessMetrics, metricsRegistry, observePool } from '../server/process/metrics.ts';
import { metricsUrl, serveMetrics } from './metrics-server.ts';
import { deliversWebhooks, parseRole, servesHttp, type ProcessRole } from './process-role.ts';
import { memoryLimitStores, type LimitStores } from '../server/limits/rate-limits.ts';
import { secretBox, type SecretBox } from '../server/auth/secret-box.ts';
import { secretsKeyFor } from './secrets-key.ts';
import { describeStartupError } from './startup-errors.ts';
import { startEmbeddedVacuum } from '../services/maintenance/embedded-vacuum.ts';
import { startRoomSweep } from '../services/rooms/sweep.ts';
import { joinDelivery } from '../services/webhooks/delivery-settings.ts';
import { startDeliveryWorker } from '../services/webhooks/worker.ts';

/** Secrets printed once, on the first start of an embedded database. */
type Demo = DemoCredentials;

// Whatever this process writes (the embedded database's files, keys, sockets) is its owner's alone, however it was
// started (db/private-files.ts); what an earlier start left open is tightened when the database opens.
process.umask(OWNER_ONLY_UMASK);

let config: Config;
let role: ProcessRole;
try {
  config = loadConfig();
  role = parseRole(process.argv.slice(2));
} catch (error) {
  failStart(describeStartupError(error, {}));
}
const logger = createLogger(config.logLevel);
const embedded = !('databaseUrl' in config.database);
// A worker-role process is one process: run more of them to deliver more.
const clustered = config.webConcurrency > 1 && !embedded && servesHttp(role);
if (config.webConcurrency > 1 && embedded && cluster.isPrimary) {
  process.stderr.write(
    `WEB_CONCURRENCY=${config.webConcurrency} ignored: the embedded database serves from one process; set DATABASE_URL (PostgreSQL) to run several\n`,
  );
}
// A new data directory: the start says what it does at each step, where a restart says one line.
const dataDir = 'dataDir' in config.database ? config.database.dataDir : undefined;
const firstStart = dataDir !== undefined && !existsSync(join(dataDir, 'PG_VERSION'));
let db: Db | undefined;
let limitStores: LimitStores | undefined;
try {
  progress(
    firstStart
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
  const stores = servesHttp(role) ? await openLimitStores() : undefined;
  limitStores = stores;
  if (cluster.isWorker) {
    await serve(database, undefined, stores!);
  } else {
    const demo = await prepareDatabase(database);
    if (!stores) {
      await deliverOnly(database);
    } else if (clustered) {
      await Promise.all([database.destroy(), stores.close()]);
      await runPrimary({ config, logger, banner: (port, metricsUrl) => banner(port, undefined, metricsUrl) });
    } else {
      await serve(database, demo, stores);
    }
  }
} catch (error) {
  logger.debug({ err: error }, 'could not start');
  await Promise.allSettled([db?.destroy(), limitStores?.close()]);
  failStart(describeStartupError(error, { database: config.database, port: config.port }));
}

/**
 * Migrations and reference data, by one process at a time (a PostgreSQL advisory lock), then demo data on the
 * embedded database.
 */
async function prepareDatabase(db: Db): Promise<Demo | undefined> {
  const now = new Date();
  await whileHoldingStartupLock(db, config.database, config.databaseTimeouts, async (locked) => {
    const applied = await migrateToLatest(locked, (name, index, pending) =>
      progress(`applying migration ${index}/${pending} (${name})`),
    );
    if (applied.length > 0) logger.info({ migrations: applied }, 'migrated');
    // Reference data is loaded on the first start only. Later releases' reference data arrives with `npm run cli -- seed`.
    if (await isEmpty(locked)) {
      progress('loading reference data (universities, holidays)');
      await seedReference(locked, { now });
    }
    // The first stored signing key (PostgreSQL) is made here, once, rather than by processes racing each other: each
    // would make its own and refuse the other's tokens until it re-reads the set (at most every 5 s on an unknown
    // kid). A start that takes a second or less reaches its first request well inside that time.
    if (!embedded) (await signingKeysFor(config, locked, () => {})).stop();
  });
  // Demo data goes into an embedded database that has no users yet; the demo keys and the demo student follow
  // whenever the demo student is missing, so a first start interrupted at any step completes on the next one.
  if (!embedded) return undefined;
  if (firstStart) progress('seeding demo data');
  await seedDemo(db, { seed: DEMO_SEED, now });
  if (await findCredentials(db, DEMO_STUDENT.email)) return undefined;
  return {
    partnerKey: (await issueApiKey(db, { name: FIRST_START_KEY_NAME })).key,
    student: await createDemoStudent(db, now, secretBox(secretsKeyFor(config))),
  };
}

/**
 * The rate-limit stores: Redis with REDIS_URL, reached (and answering a PING) within REDIS_TIMEOUT_MS or the start
 * fails with one line; in this process's memory otherwise. The Redis client is loaded only with REDIS_URL (~0.3 s of
 * every embedded start otherwise), and before the bounded connection attempt starts, so that loading it never counts
 * against REDIS_TIMEOUT_MS.
 */
async function openLimitStores(): Promise<LimitStores> {
  if (!config.redisUrl) return memoryLimitStores();
  const { redisLimitStores } = await import('../server/limits/redis-limit-stores.ts');
  return redisLimitStores(config.redisUrl, {
    keyPrefix: config.redisKeyPrefix,
    timeoutMs: config.redisTimeoutMs,
    logger,
  });
}

async function serve(db: Db, demo: Demo | undefined, limitStores: LimitStores): Promise<void> {
  const signingKeys = await signingKeysFor(config, db, (error) =>
    logger.warn({ err: error }, 'could not re-read the signing keys; verifying with the set already known'),
  );
  const tokens = accessTokenIssuer(signingKeys, { issuer: config.publicUrl, now: () => new Date() });
  const tutor = tutorFromConfig(config.ai);
  collectProcessMetrics();
  const lifecycle = createLifecycle();
  // One box seals and opens the webhook secrets for the endpoint API and for delivery.
  const secrets = secretBox(secretsKeyFor(config));
  // Readiness moves reach this process's streams over it, and new events its webhook worker, whichever process made them.
  const notifications = listenForNotifications(db);
  const worker = deliversWebhooks(role) ? await deliveryWorker(db, lifecycle, secrets, notifications) : undefined;
  // Whatever the role: the embedded database has no autovacuum, and this process is the only one that opens it.
  const vacuum = startEmbeddedVacuum({ db, lifecycle, logger });
  const webhooks = { secrets, targets: { allowPrivate: config.webhooks.allowPrivateTargets } };
  let server: Server;
  try {
    const app = await createApp({
      db,
      logger,
      limitStores,
      tokens,
      tutor,
      webhooks,
      aiQueue: createAiQueue(config.aiQueue),
      exports: createExportLimits(config.exports),
      config,
      lifecycle,
      notifications,
      streamSettings: config.streams,
      ...(config.paymentProviderSecret ? { paymentProviderSecret: config.paymentProviderSecret } : {}),
    });
    server = await listen(
      answerClientErrors(createServer(requestTimeoutOptions(config.requestTimeoutMs), app)),
      config.port,
    );
  } catch (error) {
    // The background work started above stops before the caller closes the database under it: otherwise its next
    // query fails on the closed pool and logs errors after the start's one line.
    signingKeys.stop();
    await Promise.allSettled([worker?.stop(), vacuum?.stop(), notifications.close()]);
    throw error;
  }
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  logger.info(
    { port, database: describeTarget(config.database), sharedLimits: Boolean(config.redisUrl), tutor: tutor.model },
    'listening',
  );
  const cliSocket = dataDir && !dataDir.startsWith('memory://') ? await openCliSocket(dataDir, db) : undefined;
  // In a cluster the primary serves the workers' metrics, aggregated, and prints the banner.
  const metricsServer =
    config.metrics && !cluster.isWorker
      ? await serveMetrics(config.metrics, () => metricsRegistry.metrics(), metricsRegistry.contentType)
      : undefined;

  stopOnSignals(server, lifecycle, {
    drainMs: config.shutdownDrainSeconds * 1000,
    deadlineMs: config.shutdownGraceSeconds * 1000,
    logger,
    release: async () => {
      signingKeys.stop();
      metricsServer?.close();
      await Promise.all([worker?.stop(), vacuum?.stop(), cliSocket?.close()]);
      return Promise.allSettled([notifications.close(), db.destroy(), limitStores.close()]);
    },
  });
  // After the signals are handled: a supervisor that stops the process as soon as it reads the banner gets a graceful
  // stop, not the default action of a signal that came before its handler.
  if (!cluster.isWorker) process.stderr.write(banner(port, demo, metricsServer && metricsUrl(metricsServer)) + '\n');
}

/**
 * Express's app.listen hands a listen error (EADDRINUSE) to its callback, where it is easily lost; a plain server
 * rejects here instead, and the start fails with one line.
 */
function listen(server: Server, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, () => (server.off('error', reject), resolve(server)));
  });
}

/**
 * `npm run cli` while this process holds the embedded database: command lines sent to a socket in its directory run
 * here (app/cli/server-socket.ts). Serving goes on without it if the socket cannot be made (a path too long for
 * a socket): the CLI then says the directory is in use.
 */
async function openCliSocket(dataDir: string, db: Db) {
  try {
    return await serveCliSocket(dataDir, db, describeTarget(config.database));
  } catch (error) {
    logger.warn(
      { err: error },
      'npm run cli cannot reach this server (no socket in the data directory): stop the server to run commands',
    );
    return undefined;
  }
}

/** The worker's part: webhook delivery, and the study rooms' sweep (what their clock brings when nobody watches). */
async function deliveryWorker(db: Db, lifecycle: LifecycleControl, box: SecretBox, notifications: Notifications) {
  // Refuses the start when the processes already delivering on this database run with other delivery settings.
  const registration = embedded ? undefined : await joinDelivery(db, config.webhooks, logger);
  const delivery = startDeliveryWorker({ db, box, config: config.webhooks, logger, lifecycle, notifications });
  const rooms = startRoomSweep({ db, lifecycle, logger });
  return {
    stop: async () => {
      await Promise.all([delivery.stop(), rooms.stop()]);
      await registration?.leave();
    },
  };
}

/** The one LISTEN connection of the process (NOTIFY from any process's commits), for every role. LISTEN needs a session, so it bypasses a transaction pooler. */
function listenForNotifications(db: Db): Notifications {
  const listenUrl = 'databaseUrl' in config.database ? sessionUrlOf(config.database) : undefined;
  return notificationsFor(db, listenUrl, { logger, timeoutMs: config.databaseTimeouts.connectMs });
}

/**
 * The worker role: webhook delivery without an HTTP listener. A stop stops claiming, lets the attempts in flight
 * finish (any cut short by the deadline are made again once their lease ends), then closes the database.
 */
async function deliverOnly(db: Db): Promise<void> {
  collectProcessMetrics();
  const lifecycle = createLifecycle();
  const notifications = listenForNotifications(db);
  const worker = await deliveryWorker(db, lifecycle, secretBox(secretsKeyFor(config)), notifications);
  const vacuum = startEmbeddedVacuum({ db, lifecycle, logger });
  const metricsServer = config.metrics
    ? await serveMetrics(config.metrics, () => metricsRegistry.metrics(), metricsRegistry.contentType)
    : undefined;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ reason: signal }, 'stopping: finishing the webhook attempts in flight');
    lifecycle.beginDrain();
    setTimeout(() => {
      logger.error(
        { attemptsRunning: lifecycle.running },
        'stop deadline reached: exiting; unfinished attempts are made again when their lease ends',
      );
      process.exit(1);
    }, config.shutdownGraceSeconds * 1000).unref();
    await Promise.all([worker.stop(), vacuum?.stop()]);
    await lifecycle.idle();
    metricsServer?.close();
    await Promise.allSettled([notifications.close(), db.destroy()]);
    logger.info('stopped');
    process.exit(0);
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => void stop(signal));
  // After the signals are handled, as the web process's banner (serve).
  logger.info({ database: describeTarget(config.database) }, 'delivering webhooks');
  process.stderr.write(
    `study-companion-api worker: delivering webhooks  (${describeTarget(config.database)})${metricsServer ? `\n  metrics (Prometheus): ${metricsUrl(metricsServer)}` : ''}\n`,
  );
}

/** What a person starting the service reads first: where it listens and how to try it. */
function banner(port: number, demo: Demo | undefined, metricsAt: string | undefined): string {
  const base = `http://localhost:${port}`;
  // Hints name the database they act on: a bare `npm run cli` would write into the embedded one. On PostgreSQL the
  // CLI also needs the servers' SECRETS_KEY (it opens the secrets sealed in the database): named, never printed.
  const secretsKey = 'databaseUrl' in config.database ? 'SECRETS_KEY="$SECRETS_KEY" ' : '';
  const cli = `${cliEnvironmentFor(config.database)}${secretsKey}npm run cli --`;
  const processes = clustered ? `, ${config.webConcurrency} processes` : '';
  return [
    `study-companion-api listening on ${base}  (${describeTarget(config.database)}${processes})`,
    `  docs: ${base}/docs (general)  ${base}/api/v1/docs (partner)`,
    `  partner API v1: ${base}/api/v1/health`,
    ...(metricsAt ? [`  metrics (Prometheus): ${metricsAt}`] : []),
    demo
      ? `  demo partner key (shown once, stored only as a hash):\n    ${demo.partnerKey}\n  try: curl -H "X-Service-API-Key: ${demo.partnerKey}" ${base}/api/v1/universities?limit=3`
      : `  create a partner key: ${cli} keys create --name "my key"`,
    demo
      ? `  demo student ${demo.student.email}, password ${demo.student.password} (sign in at ${base}/oauth/authorize)\n` +
        `  demo student's personal API key, every scope (shown once):\n    ${demo.student.key}\n` +
        `  try: curl -H "X-Service-API-Key: ${demo.student.key}" ${base}/api/today/loop\n` +
        `  lost them? new demo credentials: ${cli} demo credentials  (works while the server runs)`
      : `  create a student: ${cli} users create --email you@example.com --nickname you`,
    ...(embedded && !demo ? [`  new demo credentials: ${cli} demo credentials`] : []),
  ].join('\n');
}

/**
 * A start-up step, logged at info like the rest of the start (readable lines in a terminal, JSON in a log): a first
 * start takes seconds, and a newcomer should see it working. Cluster workers leave it to their primary.
 */
function progress(step: string): void {
  if (!cluster.isWorker) logger.info(`${step}…`);
}

function failStart(line: string): never {
  process.stderr.write(`could not start: ${line}\n`);
  process.exit(1);
}
