// Every setting of the service, read once from the environment. README.md documents each variable.
import { DEFAULT_AI_QUEUE_LIMITS, type AiQueueLimits } from '../services/ai/queue.ts';
import { DEFAULT_EXPORT_SETTINGS, type ExportSettings } from '../services/exports/export-limits.ts';
import { DEFAULT_DATABASE_TIMEOUTS, type DatabaseTimeouts, type DbTarget, type PostgresTarget } from '../db/connect.ts';
import { DEFAULT_REDIS_KEY_PREFIX, DEFAULT_REDIS_TIMEOUT_MS } from '../server/limits/rate-limits.ts';
import { DEFAULT_STREAM_SETTINGS, type StreamSettings } from '../services/events/readiness-stream.ts';
import { DEFAULT_REQUEST_TIMEOUT_MS } from '../server/http/request-timeout.ts';
import { SECRETS_KEY_BYTES } from '../server/auth/secret-box.ts';
import proxyaddr from 'proxy-addr';
import { ConfigError } from '../server/process/config-error.ts';
import type { AiService } from '../services/ai/tutor/index.ts';
import type { WebhookConfig } from '../services/webhooks/delivery-config.ts';

export interface Config {
  port: number;
  database: DbTarget;
  /** Bounds on connecting to PostgreSQL and on each statement (unused on the embedded database). */
  databaseTimeouts: DatabaseTimeouts;
  /** Redis for rate-limit counters shared by several processes; in-process counters when absent. */
  redisUrl: string | undefined;
  /** Prepended to every Redis key, so deployments sharing one Redis keep separate counters and lockouts. */
  redisKeyPrefix: string;
  /** Bound on connecting to Redis and on each command. */
  redisTimeoutMs: number;
  logLevel: string;
  /** Check every response against the spec at run time and log violations (always on in tests). */
  validateResponses: boolean;
  /** Largest accepted request body, in bytes. */
  bodyLimitBytes: number;
  /** Longest a request's headers and body may take to arrive; then 408 and the connection closes (server/http/request-timeout.ts). */
  requestTimeoutMs: number;
  /** Seconds a stop keeps serving (each response closing its connection) before the listener closes. */
  shutdownDrainSeconds: number;
  /** Seconds from SIGTERM/SIGINT after which the process exits whatever still runs (the hard deadline). */
  shutdownGraceSeconds: number;
  /** Origins (scheme://host[:port]) whose browser pages may call the API surfaces (server/http/cors.ts); empty: none. */
  corsOrigins: string[];
  /** Express's `trust proxy` setting, for client addresses behind a load balancer. */
  trustProxy: boolean | number | string;
  /** The service's public base URL: the OAuth issuer (`iss`) and the base of the metadata's endpoint URLs. */
  publicUrl: string;
  /** ES256 private key (PKCS#8 PEM) that signs access tokens, alone; absent: keys stored in DATA_DIR or the database. */
  jwtPrivateKey: string | undefined;
  /** 32 bytes that encrypt secrets stored in the database (signing keys' private halves); required on PostgreSQL. */
  secretsKey: Buffer | undefined;
  /** Web processes `npm start` runs (node:cluster) on PostgreSQL; the embedded database allows one. */
  webConcurrency: number;
  /** Where GET /metrics answers (Prometheus text); absent: no metrics endpoint. Never on the API's port. */
  metrics: { port: number; host: string } | undefined;
  /** The readiness stream's heartbeat interval and longest duration (services/events/readiness-stream.ts). */
  streams: StreamSettings;
  /** An OpenAI-compatible chat-completions service for the AI tutor; absent: the built-in local tutor. */
  ai: AiService | undefined;
  /** The Standard Webhooks secret (`whsec_…`) the payment provider signs its events with; absent: none are accepted. */
  paymentProviderSecret: string | undefined;
  /** Replies generated at once by this process, and requests that may wait for a slot (contract accounts first). */
  aiQueue: AiQueueLimits;
  /** Account exports reading the database at once in this process (services/exports/export-limits.ts). */
  exports: Pick<ExportSettings, 'maxReading'>;
  webhooks: WebhookConfig;
}


/** The model asked for when AI_MODEL is not set. */
const DEFAULT_AI_MODEL = 'gpt-4o-mini';

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const webConcurrency = integer(env, 'WEB_CONCURRENCY', 1, 1, 64);
  // Tokens carry the issuer; processes that default it each to their own idea of their address reject each other's.
  if (webConcurrency > 1 && env.DATABASE_URL && !env.PUBLIC_URL) {
    throw new ConfigError('PUBLIC_URL is required with WEB_CONCURRENCY above 1: every process must issue and accept tokens under the same issuer (e.g. PUBLIC_URL=https://api.example.com)');
  }
  const metricsPort = env.METRICS_PORT ? integer(env, 'METRICS_PORT', 0, 0, 65535) : undefined;
  return {
    port,
    database: env.DATABASE_URL ? postgresTarget(env.DATABASE_URL, env) : { dataDir: env.DATA_DIR || '.data' },
    databaseTimeouts: {
      connectMs: integer(env, 'DATABASE_CONNECT_TIMEOUT_MS', DEFAULT_DATABASE_TIMEOUTS.connectMs, 100, 60_000),
      statementMs: integer(env, 'DATABASE_STATEMENT_TIMEOUT_MS', DEFAULT_DATABASE_TIMEOUTS.statementMs, 100, 600_000),
    },
    redisUrl: env.REDIS_URL || undefined,
    redisKeyPrefix: env.REDIS_KEY_PREFIX || DEFAULT_REDIS_KEY_PREFIX,
    redisTimeoutMs: integer(env, 'REDIS_TIMEOUT_MS', DEFAULT_REDIS_TIMEOUT_MS, 50, 60_000),
    logLevel: env.LOG_LEVEL || 'info',
    validateResponses: env.VALIDATE_RESPONSES === '1',
    bodyLimitBytes: integer(env, 'BODY_LIMIT_BYTES', 100 * 1024, 1, 50 * 1024 * 1024),
    requestTimeoutMs: integer(env, 'REQUEST_TIMEOUT_MS', DEFAULT_REQUEST_TIMEOUT_MS, 100, 300_000),
    ...shutdownTimes(env),
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    corsOrigins: parseCorsOrigins(env.CORS_ORIGINS),
    publicUrl: parsePublicUrl(env.PUBLIC_URL || `http://localhost:${port}`),
    jwtPrivateKey: env.JWT_PRIVATE_KEY?.replace(/\\n/g, '\n') || undefined,
    secretsKey: parseSecretsKey(env.SECRETS_KEY),
    webConcurrency,
    metrics: metricsPort === undefined ? undefined : { port: metricsPort, host: env.METRICS_HOST || '127.0.0.1' },
    streams: {
      heartbeatMs: integer(env, 'SSE_HEARTBEAT_MS', DEFAULT_STREAM_SETTINGS.heartbeatMs, 100, 600_000),
      maxDurationMs: integer(env, 'SSE_MAX_DURATION_MS', DEFAULT_STREAM_SETTINGS.maxDurationMs, 1_000, 24 * 3_600_000),
    },
    ai: parseAi(env),
    paymentProviderSecret: parsePaymentProviderSecret(env.PAYMENT_PROVIDER_SECRET),
    aiQueue: {
      maxConcurrency: integer(env, 'AI_MAX_CONCURRENCY', DEFAULT_AI_QUEUE_LIMITS.maxConcurrency, 1, 1000),
      maxQueue: integer(env, 'AI_MAX_QUEUE', DEFAULT_AI_QUEUE_LIMITS.maxQueue, 0, 10_000),
    },
    exports: { maxReading: integer(env, 'EXPORT_MAX_READING', DEFAULT_EXPORT_SETTINGS.maxReading, 1, 100) },
    webhooks: {
      allowPrivateTargets: env.WEBHOOK_ALLOW_PRIVATE_TARGETS === '1',
      attemptTimeoutMs: integer(env, 'WEBHOOK_ATTEMPT_TIMEOUT_MS', 10_000, 100, 60_000),
      retryScale: retryScale(env.WEBHOOK_RETRY_SCALE),
      pollMs: integer(env, 'WEBHOOK_POLL_MS', 500, 500, 60_000),
    },
  };
}

/**
 * DATABASE_POOLER=transaction: DATABASE_URL is a transaction-mode pooler (PgBouncer), and DATABASE_SESSION_URL (the
 * database itself, or a session-mode pooler) is required for LISTEN and the start-up lock. Named prepared statements
 * default to off there (PgBouncer before 1.21 mixes them up between clients); DATABASE_PREPARED_STATEMENTS=on|off
 * overrides the default either way.
 */
function postgresTarget(databaseUrl: string, env: NodeJS.ProcessEnv): PostgresTarget {
  const pooler = env.DATABASE_POOLER || 'none';
  if (pooler !== 'none' && pooler !== 'transaction') throw new ConfigError(`DATABASE_POOLER must be none or transaction, got "${pooler}"`);
  const transactionPooler = pooler === 'transaction';
  if (transactionPooler && !env.DATABASE_SESSION_URL) {
    throw new ConfigError('DATABASE_POOLER=transaction needs DATABASE_SESSION_URL: a connection that bypasses the transaction pooler (LISTEN and the start-up lock need a session)');
  }
  const prepared = env.DATABASE_PREPARED_STATEMENTS || (transactionPooler ? 'off' : 'on');
  if (prepared !== 'on' && prepared !== 'off') throw new ConfigError(`DATABASE_PREPARED_STATEMENTS must be on or off, got "${prepared}"`);
  return { databaseUrl, transactionPooler, preparedStatements: prepared === 'on', ...(env.DATABASE_SESSION_URL && { sessionUrl: env.DATABASE_SESSION_URL }) };
}

/** The drain must end before the deadline, or the deadline would cut every stop short. */
function shutdownTimes(env: NodeJS.ProcessEnv): Pick<Config, 'shutdownDrainSeconds' | 'shutdownGraceSeconds'> {
  const shutdownGraceSeconds = integer(env, 'SHUTDOWN_GRACE_SECONDS', 10, 1, 600);
  const shutdownDrainSeconds = integer(env, 'SHUTDOWN_DRAIN_SECONDS', Math.min(5, shutdownGraceSeconds - 1), 0, 599);
  if (shutdownDrainSeconds >= shutdownGraceSeconds) {
    throw new ConfigError(`SHUTDOWN_DRAIN_SECONDS (${shutdownDrainSeconds}) must be less than SHUTDOWN_GRACE_SECONDS (${shutdownGraceSeconds})`);
  }
  return { shutdownDrainSeconds, shutdownGraceSeconds };
}

/** AI_BASE_URL and AI_API_KEY go together: one without the other is a mistake worth refusing to start over. */
function parseAi(env: NodeJS.ProcessEnv): Config['ai'] {
  const baseUrl = env.AI_BASE_URL || undefined;
  const apiKey = env.AI_API_KEY || undefined;
  if (!baseUrl && !apiKey) return undefined;
  if (!baseUrl || !apiKey) throw new ConfigError('AI_BASE_URL and AI_API_KEY must be set together (or neither, for the built-in tutor)');
  httpUrl('AI_BASE_URL', baseUrl);
  return { baseUrl, apiKey, model: env.AI_MODEL || DEFAULT_AI_MODEL };
}

/** Standard Webhooks secrets are `whsec_` and 24 to 64 random bytes in base64; a shorter key is refused. */
function parsePaymentProviderSecret(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  const key = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(raw)?.[1];
  if (!key || Buffer.from(key, 'base64').length < 24) {
    throw new ConfigError('PAYMENT_PROVIDER_SECRET must be the whsec_… secret the payment provider shows (whsec_ and at least 24 bytes in base64)');
  }
  return raw;
}

function retryScale(raw: string | undefined): number {
  if (raw === undefined || raw === '') return 1;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0 || value > 1) throw new ConfigError(`WEBHOOK_RETRY_SCALE must be a number above 0 and at most 1, got "${raw}"`);
  return value;
}

function parseSecretsKey(raw: string | undefined): Buffer | undefined {
  if (!raw) return undefined;
  const key = Buffer.from(raw, 'base64');
  if (key.length !== SECRETS_KEY_BYTES || key.toString('base64') !== raw.trim()) {
    throw new ConfigError(`SECRETS_KEY must be ${SECRETS_KEY_BYTES} random bytes in base64 (make one with: openssl rand -base64 32)`);
  }
  return key;
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

/**
 * A list of addresses is compiled here as Express compiles its `trust proxy` setting (comma-separated, by proxy-addr),
 * so a value Express would refuse at start (`yes`) is refused by the one check that config check runs too.
 */
function parseTrustProxy(raw: string | undefined): boolean | number | string {
  if (raw === undefined || raw === '' || raw === 'false') return false;
  if (raw === 'true') return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  try {
    proxyaddr.compile(raw.split(',').map((part) => part.trim()));
  } catch (error) {
    throw new ConfigError(
      `TRUST_PROXY must be true, false, a hop count or addresses and subnets (loopback, linklocal, uniquelocal, 10.0.0.0/8), got "${raw}": ${(error as Error).message}`,
    );
  }
  return raw;
}

/**
 * Exact origins only, as a browser sends them in Origin: a wildcard would let any page spend a user's key, and an origin
 * written otherwise (a path, a trailing slash, capitals) would never match one.
 */
function parseCorsOrigins(raw: string | undefined): string[] {
  const origins = (raw ?? '').split(',').map((origin) => origin.trim()).filter(Boolean);
  for (const origin of origins) {
    const url = URL.canParse(origin) ? new URL(origin) : undefined;
    if (!url || !/^https?:$/.test(url.protocol) || url.origin !== origin) {
      throw new ConfigError(`CORS_ORIGINS must be comma-separated origins written as browsers send them (e.g. https://docs.example.com,http://localhost:8080; no "*", no path), got "${origin}"`);
    }
  }
  return origins;
}

/** Without a trailing slash, so endpoint URLs are `${publicUrl}/oauth/token`. */
function parsePublicUrl(raw: string): string {
  const url = httpUrl('PUBLIC_URL', raw);
  return url.origin + url.pathname.replace(/\/+$/, '');
}

function httpUrl(name: string, raw: string): URL {
  const url = URL.canParse(raw) ? new URL(raw) : undefined;
  if (!url || !/^https?:$/.test(url.protocol)) throw new ConfigError(`${name} must be an absolute http(s) URL, got "${raw}"`);
  return url;
}
