// Every environment variable of the service, declared once: what it accepts, its default and what it is for. loadConfig
// (config.ts) reads them into the Config, config check shows them, and `npm run generate` writes docs/configuration.md
// and .env.example from this list, in this order. A new setting is one entry here and its place in loadConfig.
import proxyaddr from 'proxy-addr';
import { DEFAULT_AI_QUEUE_LIMITS } from '../services/ai/queue.ts';
import { DEFAULT_EXPORT_SETTINGS } from '../services/exports/export-settings.ts';
import { DEFAULT_DATABASE_TIMEOUTS } from '../db/database-timeouts.ts';
import { DEFAULT_REDIS_KEY_PREFIX, DEFAULT_REDIS_TIMEOUT_MS } from '../server/limits/redis-defaults.ts';
import { DEFAULT_STREAM_SETTINGS } from '../services/streams/stream-settings.ts';
import { DEFAULT_REQUEST_TIMEOUT_MS } from '../server/http/request-timeout.ts';
import { SECRETS_KEY_BYTES } from '../server/auth/secret-box.ts';
import { ConfigError } from '../server/process/config-error.ts';
import { flag, integer, oneOf, value, type Env } from './env-variables.ts';

const SERVICE = 'The service';
const DATABASE = 'Database';
const REDIS = 'Redis';
const PROCESSES = 'Processes and stopping';
const TOKENS = 'Tokens and secrets';
const METRICS = 'Metrics';
const AI = 'AI tutor';
const PAYMENTS = 'Payments';
const WEBHOOKS = 'Webhooks';
const BOUNDS = 'Streams and exports';

const DEFAULT_SHUTDOWN_GRACE_SECONDS = 10;
/** The drain a stop gets by default, shortened when the deadline leaves less. */
const DEFAULT_SHUTDOWN_DRAIN_SECONDS = 5;

export const CONFIG_VARIABLES = {
  PORT: integer({
    group: SERVICE,
    description: 'The port the API, the docs and the probes listen on.',
    min: 0,
    max: 65535,
    default: 3000,
  }),
  PUBLIC_URL: value({
    group: SERVICE,
    description:
      "The public base URL of the service: the OAuth issuer (`iss`) and the base of the metadata's endpoint URLs. Required with WEB_CONCURRENCY above 1 on PostgreSQL, so every process issues and accepts tokens under one issuer.",
    accepts: 'an absolute http(s) URL (a trailing slash is dropped)',
    whenUnset: 'http://localhost:$PORT (with PORT=0, the port the system picked)',
    defaultText: '`http://localhost:$PORT` (with `PORT=0`, the port the system picked)',
    parse: (name, raw) => {
      const url = httpUrl(name, raw);
      return url.origin + url.pathname.replace(/\/+$/, '');
    },
  }),
  LOG_LEVEL: oneOf({
    group: SERVICE,
    description: 'The lowest level logged (pino). At a terminal each entry is one line; elsewhere JSON lines.',
    values: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
    default: 'info',
  }),
  VALIDATE_RESPONSES: flag({
    group: SERVICE,
    description:
      'Checks every response against the spec at run time and logs each one that breaks the contract (tests always do).',
    on: 'responses checked against the spec',
  }),
  BODY_LIMIT_BYTES: integer({
    group: SERVICE,
    description: 'The largest request body accepted; a larger one is answered 413 `payload_too_large`.',
    min: 1,
    max: 50 * 1024 * 1024,
    unit: 'bytes',
    default: 100 * 1024,
  }),
  REQUEST_TIMEOUT_MS: integer({
    group: SERVICE,
    description: "The longest a request's headers and body may take to arrive; then 408 and the connection closes.",
    min: 100,
    max: 300_000,
    unit: 'ms',
    default: DEFAULT_REQUEST_TIMEOUT_MS,
  }),
  TRUST_PROXY: value({
    group: SERVICE,
    description:
      "Express's `trust proxy` setting: which proxies in front of the service are trusted to name the client's address (rate limits and logs use it).",
    accepts:
      '`true`, `false`, a hop count, or comma-separated addresses and subnets (`loopback`, `linklocal`, `uniquelocal`, `10.0.0.0/8`)',
    default: false as boolean | number | string,
    parse: parseTrustProxy,
  }),
  CORS_ORIGINS: value({
    group: SERVICE,
    description: "Origins whose browser pages may call the API surfaces (the static docs' try-it console, a web app).",
    accepts:
      'comma-separated origins as browsers send them (`https://docs.example.com,http://localhost:8080`); no `*`, no path',
    default: [] as string[],
    defaultText: 'none: no cross-origin access',
    parse: parseCorsOrigins,
    show: (origins) => origins.join(', ') || '(not set: no cross-origin access)',
  }),

  DATABASE_URL: value({
    group: DATABASE,
    description: 'The PostgreSQL database, as a connection URL.',
    accepts: 'a postgres:// URL',
    whenUnset: 'embedded PGlite in DATA_DIR (one process)',
    parse: (_name, raw) => raw,
    show: withoutPassword,
  }),
  DATABASE_POOLER: oneOf({
    group: DATABASE,
    description:
      'What DATABASE_URL points at: PostgreSQL itself (or a session-mode pooler), or a transaction-mode pooler such as PgBouncer. `transaction` needs DATABASE_SESSION_URL and turns named prepared statements off by default.',
    values: ['none', 'transaction'],
    default: 'none',
  }),
  DATABASE_SESSION_URL: value({
    group: DATABASE,
    description:
      'A connection that bypasses a transaction pooler, for what needs a session: LISTEN (events across processes) and the start-up lock (migrations, seeding). Required with DATABASE_POOLER=transaction.',
    accepts: 'a postgres:// URL',
    whenUnset: 'DATABASE_URL',
    parse: (_name, raw) => raw,
    show: withoutPassword,
  }),
  DATABASE_PREPARED_STATEMENTS: value({
    group: DATABASE,
    description:
      'Named prepared statements for the hottest queries. Behind PgBouncer they need version 1.21 or later with `max_prepared_statements` above 0.',
    accepts: '`on` or `off`',
    whenUnset: '`off` with DATABASE_POOLER=transaction, else `on`',
    parse: (name, raw) => {
      if (raw !== 'on' && raw !== 'off') throw new ConfigError(`${name} must be on or off, got "${raw}"`);
      return raw;
    },
  }),
  DATA_DIR: value({
    group: DATABASE,
    description: 'Where the embedded database (PGlite) and its signing keys are kept when DATABASE_URL is not set.',
    accepts: 'a directory path',
    default: '.data',
    parse: (_name, raw) => raw,
    show: (dir, env) => (env.DATABASE_URL ? '(unused with DATABASE_URL)' : dir),
  }),
  DATABASE_CONNECT_TIMEOUT_MS: integer({
    group: DATABASE,
    description: 'PostgreSQL: the longest wait to connect, or for a free connection of the pool; then 503.',
    min: 100,
    max: 60_000,
    unit: 'ms',
    default: DEFAULT_DATABASE_TIMEOUTS.connectMs,
  }),
  DATABASE_STATEMENT_TIMEOUT_MS: integer({
    group: DATABASE,
    description: 'PostgreSQL: the longest one statement may run; then 503.',
    min: 100,
    max: 600_000,
    unit: 'ms',
    default: DEFAULT_DATABASE_TIMEOUTS.statementMs,
  }),

  REDIS_URL: value({
    group: REDIS,
    description: 'Redis for the rate-limit counters and lockouts every process shares.',
    accepts: 'a redis:// or rediss:// URL',
    whenUnset: 'counters in process memory (one process)',
    parse: (_name, raw) => raw,
    show: withoutPassword,
  }),
  REDIS_KEY_PREFIX: value({
    group: REDIS,
    description: 'Prepended to every Redis key: deployments that share one Redis need different prefixes.',
    accepts: 'any text',
    default: DEFAULT_REDIS_KEY_PREFIX,
    parse: (_name, raw) => raw,
  }),
  REDIS_TIMEOUT_MS: integer({
    group: REDIS,
    description: 'The longest wait to connect to Redis and for each command.',
    min: 50,
    max: 60_000,
    unit: 'ms',
    default: DEFAULT_REDIS_TIMEOUT_MS,
  }),

  WEB_CONCURRENCY: integer({
    group: PROCESSES,
    description:
      'The web processes `npm start` runs (node:cluster) on PostgreSQL; the embedded database serves from one.',
    min: 1,
    max: 64,
    default: 1,
  }),
  SHUTDOWN_GRACE_SECONDS: integer({
    group: PROCESSES,
    description:
      'The hard deadline of a stop: this long after SIGTERM or SIGINT the process exits, whatever still runs.',
    min: 1,
    max: 600,
    unit: 'seconds',
    default: DEFAULT_SHUTDOWN_GRACE_SECONDS,
  }),
  SHUTDOWN_DRAIN_SECONDS: integer({
    group: PROCESSES,
    description:
      'How long a stop keeps serving (each response closing its connection) before the listener closes; less than SHUTDOWN_GRACE_SECONDS.',
    min: 0,
    max: 599,
    unit: 'seconds',
    // SHUTDOWN_GRACE_SECONDS is declared (and so checked) before this.
    default: (env: Env) =>
      Math.min(
        DEFAULT_SHUTDOWN_DRAIN_SECONDS,
        Number(env.SHUTDOWN_GRACE_SECONDS || DEFAULT_SHUTDOWN_GRACE_SECONDS) - 1,
      ),
    defaultText: `${DEFAULT_SHUTDOWN_DRAIN_SECONDS}, or SHUTDOWN_GRACE_SECONDS − 1 when that is less`,
  }),

  SECRETS_KEY: value({
    group: TOKENS,
    description: `${SECRETS_KEY_BYTES} random bytes that encrypt the secrets kept in the database (the signing keys' private halves). Required with DATABASE_URL unless JWT_PRIVATE_KEY is set; every process of one database needs the same. Make one with \`openssl rand -base64 32\`.`,
    accepts: `${SECRETS_KEY_BYTES} bytes in base64`,
    whenUnset: 'no stored secret can be read',
    secret: true,
    parse: parseSecretsKey,
  }),
  JWT_PRIVATE_KEY: value({
    group: TOKENS,
    description:
      'An ES256 private key that alone signs access tokens, instead of the rotating keys the service stores.',
    accepts: 'a PKCS#8 PEM (newlines may be written `\\n`)',
    whenUnset: 'keys stored in DATA_DIR or, encrypted, in the database',
    secret: true,
    parse: (_name, raw) => raw.replace(/\\n/g, '\n'),
  }),

  METRICS_PORT: integer({
    group: METRICS,
    description: "Serves Prometheus metrics at GET /metrics on this port, never on the API's.",
    min: 0,
    max: 65535,
    whenUnset: 'no metrics endpoint',
  }),
  METRICS_HOST: value({
    group: METRICS,
    description: 'The address the metrics endpoint listens on.',
    accepts: 'an address or host name',
    default: '127.0.0.1',
    parse: (_name, raw) => raw,
  }),

  AI_BASE_URL: value({
    group: AI,
    description: 'An OpenAI-compatible chat-completions API for the AI tutor; set together with AI_API_KEY.',
    accepts: 'an absolute http(s) URL',
    whenUnset: 'the built-in local tutor',
    parse: (name, raw) => (httpUrl(name, raw), raw),
  }),
  AI_API_KEY: value({
    group: AI,
    description: 'The key of that API; set together with AI_BASE_URL.',
    accepts: 'any text',
    whenUnset: 'the built-in local tutor',
    secret: true,
    parse: (_name, raw) => raw,
  }),
  AI_MODEL: value({
    group: AI,
    description: 'The model asked for.',
    accepts: 'a model name of that API',
    default: 'gpt-4o-mini',
    parse: (_name, raw) => raw,
  }),
  AI_MAX_CONCURRENCY: integer({
    group: AI,
    description: 'Replies the tutor generates at once in one process.',
    min: 1,
    max: 1000,
    default: DEFAULT_AI_QUEUE_LIMITS.maxConcurrency,
  }),
  AI_MAX_QUEUE: integer({
    group: AI,
    description:
      'Requests that may wait for a free slot in one process (contract accounts first); one more is answered 503.',
    min: 0,
    max: 10_000,
    default: DEFAULT_AI_QUEUE_LIMITS.maxQueue,
  }),

  PAYMENT_PROVIDER_SECRET: value({
    group: PAYMENTS,
    description: 'The Standard Webhooks secret the payment provider signs its events with.',
    accepts: '`whsec_` and at least 24 bytes in base64, as the provider shows it',
    whenUnset: 'POST /api/payments/provider-events answers 503 not_configured',
    secret: true,
    parse: parsePaymentProviderSecret,
  }),

  WEBHOOK_ALLOW_PRIVATE_TARGETS: flag({
    group: WEBHOOKS,
    description:
      'Lets webhook endpoints use plain http and private or loopback addresses: for development and tests only.',
    on: 'http and private addresses allowed',
  }),
  WEBHOOK_ATTEMPT_TIMEOUT_MS: integer({
    group: WEBHOOKS,
    description: 'The longest one delivery attempt may take, from connecting to the response.',
    min: 100,
    max: 60_000,
    unit: 'ms',
    default: 10_000,
  }),
  WEBHOOK_ATTEMPTS_PER_PROCESS: integer({
    group: WEBHOOKS,
    description:
      'Delivery attempts one delivering process makes at once, shared between the accounts in turn ' +
      '(each account holds at most 3, each endpoint 1). An attempt waits on the network: each holds a socket and its buffers, not a CPU.',
    min: 1,
    max: 2_000,
    default: 200,
  }),
  WEBHOOK_POLL_MS: integer({
    group: WEBHOOKS,
    description:
      'How often a delivering process looks for retries now due and endpoints whose breaker closed. New events and re-sends wake delivery at their commit (NOTIFY): this is a fallback, not the delay of a new event.',
    min: 500,
    max: 60_000,
    unit: 'ms',
    default: 500,
  }),
  WEBHOOK_RETRY_SCALE: value({
    group: WEBHOOKS,
    description:
      'For tests: multiplies the retry delays and the three days after which a failing endpoint is disabled.',
    accepts: 'a number above 0 and at most 1',
    default: 1,
    parse: (name, raw) => {
      const scale = Number(raw);
      if (!Number.isFinite(scale) || scale <= 0 || scale > 1)
        throw new ConfigError(`${name} must be a number above 0 and at most 1, got "${raw}"`);
      return scale;
    },
  }),

  SSE_HEARTBEAT_MS: integer({
    group: BOUNDS,
    description: 'How often the readiness stream sends a heartbeat comment.',
    min: 100,
    max: 600_000,
    unit: 'ms',
    default: DEFAULT_STREAM_SETTINGS.heartbeatMs,
  }),
  SSE_MAX_DURATION_MS: integer({
    group: BOUNDS,
    description:
      'The longest a readiness stream stays open; then it ends and the client reconnects with Last-Event-ID.',
    min: 1_000,
    max: 24 * 3_600_000,
    unit: 'ms',
    default: DEFAULT_STREAM_SETTINGS.maxDurationMs,
  }),
  EXPORT_MAX_READING: integer({
    group: BOUNDS,
    description: 'Account exports one process reads from the database at once; one more is answered 503.',
    min: 1,
    max: 100,
    default: DEFAULT_EXPORT_SETTINGS.maxReading,
  }),
};

/**
 * A list of addresses is compiled here as Express compiles its `trust proxy` setting (comma-separated, by proxy-addr),
 * so a value Express would refuse at start (`yes`) is refused by the one check that config check runs too.
 */
function parseTrustProxy(name: string, raw: string): boolean | number | string {
  if (raw === 'false') return false;
  if (raw === 'true') return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  try {
    proxyaddr.compile(raw.split(',').map((part) => part.trim()));
  } catch (error) {
    throw new ConfigError(
      `${name} must be true, false, a hop count or addresses and subnets (loopback, linklocal, uniquelocal, 10.0.0.0/8), got "${raw}": ${(error as Error).message}`,
    );
  }
  return raw;
}

/**
 * Exact origins only, as a browser sends them in Origin: a wildcard would let any page spend a user's key, and an
 * origin written otherwise (a path, a trailing slash, capitals) would never match one.
 */
function parseCorsOrigins(name: string, raw: string): string[] {
  const origins = raw
    .split(',')
    .map((origin) => origin.trim())
    .filter(Boolean);
  for (const origin of origins) {
    const url = URL.canParse(origin) ? new URL(origin) : undefined;
    if (!url || !/^https?:$/.test(url.protocol) || url.origin !== origin) {
      throw new ConfigError(
        `${name} must be comma-separated origins written as browsers send them (e.g. https://docs.example.com,http://localhost:8080; no "*", no path), got "${origin}"`,
      );
    }
  }
  return origins;
}

function parseSecretsKey(name: string, raw: string): Buffer {
  const key = Buffer.from(raw, 'base64');
  if (key.length !== SECRETS_KEY_BYTES || key.toString('base64') !== raw.trim()) {
    throw new ConfigError(
      `${name} must be ${SECRETS_KEY_BYTES} random bytes in base64 (make one with: openssl rand -base64 32)`,
    );
  }
  return key;
}

/** Standard Webhooks secrets are `whsec_` and 24 to 64 random bytes in base64; a shorter key is refused. */
function parsePaymentProviderSecret(name: string, raw: string): string {
  const key = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(raw)?.[1];
  if (!key || Buffer.from(key, 'base64').length < 24) {
    throw new ConfigError(
      `${name} must be the whsec_… secret the payment provider shows (whsec_ and at least 24 bytes in base64)`,
    );
  }
  return raw;
}

export function httpUrl(name: string, raw: string): URL {
  const url = URL.canParse(raw) ? new URL(raw) : undefined;
  if (!url || !/^https?:$/.test(url.protocol))
    throw new ConfigError(`${name} must be an absolute http(s) URL, got "${raw}"`);
  return url;
}

/** A connection URL as config check prints it: its password masked. */
function withoutPassword(raw: string): string {
  const url = URL.canParse(raw) ? new URL(raw) : undefined;
  if (!url) return '(set, not shown: not a URL, so its password could not be masked)';
  if (url.password) url.password = '***';
  return url.toString();
}
