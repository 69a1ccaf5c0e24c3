// config check: validates the environment as `npm start` reads it and prints the resolved settings, secrets masked,
// without opening the database. Exit 1 with the one-line reason when a setting is invalid.
import { signingKeySource } from '../../server/auth/signing-key-store.ts';
import { loadConfig, type Config } from '../../app/config.ts';
import { parse } from './shared.ts';

export async function check(args: string[]): Promise<void> {
  parse(args, {});
  const config = loadConfig();
  const signingKeys = signingKeySource(config);
  const rows = resolvedSettings(config, signingKeys);
  const width = Math.max(...rows.map(([name]) => name.length));
  console.log(rows.map(([name, value]) => `${name.padEnd(width)}  ${value}`).join('\n'));
  process.stderr.write('configuration is valid\n');
}

function resolvedSettings(config: Config, signingKeys: string): Array<[string, string]> {
  const database = config.database;
  return [
    ['PORT', String(config.port)],
    ['DATABASE_URL', 'databaseUrl' in database ? withoutPassword(database.databaseUrl) : '(not set: embedded PGlite)'],
    ['DATA_DIR', 'dataDir' in database ? database.dataDir : '(unused with DATABASE_URL)'],
    ['DATABASE_CONNECT_TIMEOUT_MS', String(config.databaseTimeouts.connectMs)],
    ['DATABASE_STATEMENT_TIMEOUT_MS', String(config.databaseTimeouts.statementMs)],
    ['REDIS_URL', config.redisUrl ? withoutPassword(config.redisUrl) : '(not set: rate-limit counters in process memory)'],
    ['REDIS_KEY_PREFIX', config.redisKeyPrefix],
    ['REDIS_TIMEOUT_MS', String(config.redisTimeoutMs)],
    ['WEB_CONCURRENCY', 'databaseUrl' in database ? String(config.webConcurrency) : `${config.webConcurrency} (the embedded database serves from one process)`],
    ['PUBLIC_URL', config.publicUrl],
    ['LOG_LEVEL', config.logLevel],
    ['VALIDATE_RESPONSES', config.validateResponses ? '1' : 'off'],
    ['BODY_LIMIT_BYTES', String(config.bodyLimitBytes)],
    ['SHUTDOWN_DRAIN_SECONDS', String(config.shutdownDrainSeconds)],
    ['SHUTDOWN_GRACE_SECONDS', String(config.shutdownGraceSeconds)],
    ['TRUST_PROXY', String(config.trustProxy)],
    ['CORS_ORIGINS', config.corsOrigins.join(', ') || '(not set: no cross-origin access)'],
    ['METRICS_PORT', config.metrics ? `${config.metrics.port} on ${config.metrics.host}` : '(not set: no metrics endpoint)'],
    ['JWT_PRIVATE_KEY', config.jwtPrivateKey ? '(set, masked)' : '(not set)'],
    ['SECRETS_KEY', config.secretsKey ? '(set, masked)' : '(not set)'],
    ['signing keys', { JWT_PRIVATE_KEY: 'JWT_PRIVATE_KEY alone', DATA_DIR: 'a file in DATA_DIR', database: 'the database, encrypted with SECRETS_KEY' }[signingKeys] ?? signingKeys],
    ['AI_BASE_URL', config.ai?.baseUrl ?? '(not set: the built-in tutor)'],
    ['AI_API_KEY', config.ai ? '(set, masked)' : '(not set)'],
    ['AI_MODEL', config.ai?.model ?? '(unused)'],
    ['PAYMENT_PROVIDER_SECRET', config.paymentProviderSecret ? '(set, masked)' : '(not set: provider events answered 503 not_configured)'],
    ['AI_MAX_CONCURRENCY', `${config.aiQueue.maxConcurrency} per process`],
    ['AI_MAX_QUEUE', `${config.aiQueue.maxQueue} per process`],
    ['WEBHOOK_ALLOW_PRIVATE_TARGETS', config.webhooks.allowPrivateTargets ? '1 (http and private addresses allowed)' : 'off'],
    ['WEBHOOK_ATTEMPT_TIMEOUT_MS', String(config.webhooks.attemptTimeoutMs)],
    ['WEBHOOK_POLL_MS', String(config.webhooks.pollMs)],
    ['WEBHOOK_RETRY_SCALE', String(config.webhooks.retryScale)],
    ['SSE_HEARTBEAT_MS', String(config.streams.heartbeatMs)],
    ['SSE_MAX_DURATION_MS', String(config.streams.maxDurationMs)],
  ];
}

function withoutPassword(raw: string): string {
  const url = new URL(raw);
  if (url.password) url.password = '***';
  return url.toString();
}
