// npm start: migrate, load reference data into an empty database (and demo data when it is embedded), serve, and stop
// gracefully on SIGTERM/SIGINT (server/lifecycle.ts).
import { assertDatabaseReachable, connect, describeTarget } from '../db/connect.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { findCredentials } from '../db/queries/profile.ts';
import { DEMO_SEED, isEmpty, seedDemo, seedReference } from '../db/seed/index.ts';
import { tutorFromConfig } from '../handlers/general/tutor/index.ts';
import { createApp } from './app.ts';
import { accessTokenIssuer, loadSigningKey } from './auth/access-tokens.ts';
import { issueApiKey } from './auth/api-keys.ts';
import { loadConfig } from './config.ts';
import { createDemoStudent, DEMO_STUDENT } from './demo-student.ts';
import { createLifecycle, stopOnSignals } from './lifecycle.ts';
import { createLogger } from './logger.ts';
import { memoryLimitStores, redisLimitStores } from './rate-limits.ts';

const config = loadConfig();
const logger = createLogger(config.logLevel);
const db = connect(config.database, {
  timeouts: config.databaseTimeouts,
  onConnectionError: (error) => logger.warn(error, 'a database connection failed; the pool replaces it'),
});

try {
  // Both dependencies are checked first, so an unreachable one stops the start within seconds, with one clear line.
  await assertDatabaseReachable(db, config.database, config.databaseTimeouts.connectMs);
  const limitStores = config.redisUrl
    ? await redisLimitStores(config.redisUrl, { keyPrefix: config.redisKeyPrefix, timeoutMs: config.redisTimeoutMs, logger })
    : memoryLimitStores();
  const applied = await migrateToLatest(db);
  if (applied.length > 0) logger.info({ migrations: applied }, 'migrated');
  const embedded = !('databaseUrl' in config.database);
  // Reference data is loaded on the first start only: several processes starting together must not rewrite it
  // at once. Later releases' reference data arrives with `npm run cli -- seed`.
  const now = new Date();
  if (await isEmpty(db)) await seedReference(db, { now });
  // Demo data goes into an embedded database that has no users yet; the demo keys and the demo student follow
  // whenever the demo student is missing, so a first start interrupted at any step completes on the next one.
  let demoKey: string | undefined;
  let demoStudent: Awaited<ReturnType<typeof createDemoStudent>> | undefined;
  if (embedded) {
    await seedDemo(db, { seed: DEMO_SEED, now });
    if (!(await findCredentials(db, DEMO_STUDENT.email))) {
      demoKey = (await issueApiKey(db, { name: 'demo key (first start)' })).key;
      demoStudent = await createDemoStudent(db, now);
    }
  }

  const signingKey = await loadSigningKey(config.jwtPrivateKey);
  if (signingKey.generated) {
    logger.warn('JWT_PRIVATE_KEY is not set: access tokens are signed with a key made at start-up, so they stop verifying after a restart and in other processes');
  }
  const tokens = accessTokenIssuer(signingKey, { issuer: config.publicUrl, now: () => new Date() });
  const tutor = tutorFromConfig(config.ai);
  const lifecycle = createLifecycle();
  const app = await createApp({ db, logger, limitStores, tokens, tutor, config, lifecycle });
  const server = app.listen(config.port, () => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    logger.info({ port, database: describeTarget(config.database), sharedLimits: Boolean(config.redisUrl), tutor: tutor.model }, 'listening');
    const base = `http://localhost:${port}`;
    const lines = [
      `study-companion-api listening on ${base}  (${describeTarget(config.database)})`,
      `  docs: ${base}/docs (general)  ${base}/api/v1/docs (partner)`,
      `  partner API v1: ${base}/api/v1/health`,
      demoKey
        ? `  demo partner key (shown once, stored only as a hash):\n    ${demoKey}\n  try: curl -H "X-Service-API-Key: ${demoKey}" ${base}/api/v1/universities?limit=3`
        : '  create a partner key: npm run cli -- keys create --name "my key"',
      demoStudent
        ? `  demo student ${demoStudent.email}, password ${demoStudent.password} (sign in at ${base}/oauth/authorize)\n` +
          `  demo student's personal API key, every scope (shown once):\n    ${demoStudent.key}\n` +
          `  try: curl -H "X-Service-API-Key: ${demoStudent.key}" ${base}/api/today/loop`
        : '  create a student: npm run cli -- users create --email you@example.com --nickname you',
    ];
    process.stderr.write(lines.join('\n') + '\n');
  });

  stopOnSignals(server, lifecycle, {
    drainMs: config.shutdownDrainSeconds * 1000,
    deadlineMs: config.shutdownGraceSeconds * 1000,
    logger,
    release: () => Promise.allSettled([db.destroy(), limitStores.close()]),
  });
} catch (error) {
  logger.fatal({ err: error }, 'could not start');
  await db.destroy().catch(() => {});
  process.exit(1);
}
