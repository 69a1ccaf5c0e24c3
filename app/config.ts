// Every setting of the service, read once from the environment: the variables declared in config-variables.ts (which
// docs/configuration.md and .env.example are generated from), and the rules that join several of them.
import type { AiQueueLimits } from '../services/ai/queue.ts';
import type { ExportSettings } from '../services/exports/export-settings.ts';
import type { DbTarget, PostgresTarget } from '../db/connect.ts';
import type { DatabaseTimeouts } from '../db/database-timeouts.ts';
import type { StreamSettings } from '../services/streams/stream-settings.ts';
import { ConfigError } from '../server/process/config-error.ts';
import type { AiService } from '../services/ai/tutor/index.ts';
import type { WebhookConfig } from '../services/webhooks/delivery-config.ts';
import { CONFIG_VARIABLES } from './config-variables.ts';
import { readVariables, type Env, type Values } from './env-variables.ts';

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
  /**
   * The service's public base URL: the OAuth issuer (`iss`) and the base of the metadata's endpoint URLs. Undefined
   * with PORT=0 and no PUBLIC_URL: the port, and so the default, is known once the process listens (app/process/serve.ts).
   */
  publicUrl: string | undefined;
  /** ES256 private key (PKCS#8 PEM) that signs access tokens, alone; absent: keys stored in DATA_DIR or the database. */
  jwtPrivateKey: string | undefined;
  /** 32 bytes that encrypt secrets stored in the database (signing keys' private halves); required on PostgreSQL. */
  secretsKey: Buffer | undefined;
  /** Web processes `npm start` runs (node:cluster) on PostgreSQL; the embedded database allows one. */
  webConcurrency: number;
  /** Where GET /metrics answers (Prometheus text); absent: no metrics endpoint. Never on the API's port. */
  metrics: { port: number; host: string } | undefined;
  /** The readiness stream's heartbeat interval and longest duration (services/readiness/readiness-stream.ts). */
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

export type ConfigValues = Values<typeof CONFIG_VARIABLES>;

export function loadConfig(env: Env = process.env): Config {
  return configFrom(readVariables(CONFIG_VARIABLES, env));
}

/** The Config of the declared variables' values, once the rules that join several variables hold. */
export function configFrom(v: ConfigValues): Config {
  // Tokens carry the issuer; processes that default it each to their own idea of their address reject each other's.
  if (v.WEB_CONCURRENCY > 1 && v.DATABASE_URL && !v.PUBLIC_URL) {
    throw new ConfigError(
      'PUBLIC_URL is required with WEB_CONCURRENCY above 1: every process must issue and accept tokens under the same issuer (e.g. PUBLIC_URL=https://api.example.com)',
    );
  }
  // The drain must end before the deadline, or the deadline would cut every stop short.
  if (v.SHUTDOWN_DRAIN_SECONDS >= v.SHUTDOWN_GRACE_SECONDS) {
    throw new ConfigError(
      `SHUTDOWN_DRAIN_SECONDS (${v.SHUTDOWN_DRAIN_SECONDS}) must be less than SHUTDOWN_GRACE_SECONDS (${v.SHUTDOWN_GRACE_SECONDS})`,
    );
  }
  return {
    port: v.PORT,
    database: v.DATABASE_URL ? postgresTarget(v.DATABASE_URL, v) : { dataDir: v.DATA_DIR },
    databaseTimeouts: { connectMs: v.DATABASE_CONNECT_TIMEOUT_MS, statementMs: v.DATABASE_STATEMENT_TIMEOUT_MS },
    redisUrl: v.REDIS_URL,
    redisKeyPrefix: v.REDIS_KEY_PREFIX,
    redisTimeoutMs: v.REDIS_TIMEOUT_MS,
    logLevel: v.LOG_LEVEL,
    validateResponses: v.VALIDATE_RESPONSES,
    bodyLimitBytes: v.BODY_LIMIT_BYTES,
    requestTimeoutMs: v.REQUEST_TIMEOUT_MS,
    shutdownDrainSeconds: v.SHUTDOWN_DRAIN_SECONDS,
    shutdownGraceSeconds: v.SHUTDOWN_GRACE_SECONDS,
    trustProxy: v.TRUST_PROXY,
    corsOrigins: v.CORS_ORIGINS,
    publicUrl: v.PUBLIC_URL ?? (v.PORT === 0 ? undefined : localUrl(v.PORT)),
    jwtPrivateKey: v.JWT_PRIVATE_KEY,
    secretsKey: v.SECRETS_KEY,
    webConcurrency: v.WEB_CONCURRENCY,
    metrics: v.METRICS_PORT === undefined ? undefined : { port: v.METRICS_PORT, host: v.METRICS_HOST },
    streams: { heartbeatMs: v.SSE_HEARTBEAT_MS, maxDurationMs: v.SSE_MAX_DURATION_MS },
    ai: tutorService(v),
    paymentProviderSecret: v.PAYMENT_PROVIDER_SECRET,
    aiQueue: { maxConcurrency: v.AI_MAX_CONCURRENCY, maxQueue: v.AI_MAX_QUEUE },
    exports: { maxReading: v.EXPORT_MAX_READING },
    webhooks: {
      allowPrivateTargets: v.WEBHOOK_ALLOW_PRIVATE_TARGETS,
      attemptTimeoutMs: v.WEBHOOK_ATTEMPT_TIMEOUT_MS,
      retryScale: v.WEBHOOK_RETRY_SCALE,
      pollMs: v.WEBHOOK_POLL_MS,
      attemptsPerProcess: v.WEBHOOK_ATTEMPTS_PER_PROCESS,
    },
  };
}

/**
 * DATABASE_POOLER=transaction: DATABASE_URL is a transaction-mode pooler (PgBouncer), and DATABASE_SESSION_URL (the
 * database itself, or a session-mode pooler) is required for LISTEN and the start-up lock. Named prepared statements
 * default to off there (PgBouncer before 1.21 mixes them up between clients); DATABASE_PREPARED_STATEMENTS overrides
 * the default either way.
 */
function postgresTarget(databaseUrl: string, v: ConfigValues): PostgresTarget {
  const transactionPooler = v.DATABASE_POOLER === 'transaction';
  if (transactionPooler && !v.DATABASE_SESSION_URL) {
    throw new ConfigError(
      'DATABASE_POOLER=transaction needs DATABASE_SESSION_URL: a connection that bypasses the transaction pooler (LISTEN and the start-up lock need a session)',
    );
  }
  const preparedStatements = v.DATABASE_PREPARED_STATEMENTS
    ? v.DATABASE_PREPARED_STATEMENTS === 'on'
    : !transactionPooler;
  return {
    databaseUrl,
    transactionPooler,
    preparedStatements,
    ...(v.DATABASE_SESSION_URL && { sessionUrl: v.DATABASE_SESSION_URL }),
  };
}

/** AI_BASE_URL and AI_API_KEY go together: one without the other is a mistake worth refusing to start over. */
function tutorService(v: ConfigValues): Config['ai'] {
  if (!v.AI_BASE_URL && !v.AI_API_KEY) return undefined;
  if (!v.AI_BASE_URL || !v.AI_API_KEY)
    throw new ConfigError('AI_BASE_URL and AI_API_KEY must be set together (or neither, for the built-in tutor)');
  return { baseUrl: v.AI_BASE_URL, apiKey: v.AI_API_KEY, model: v.AI_MODEL };
}

/** PUBLIC_URL's default: the service on this machine at `port`. */
export function localUrl(port: number): string {
  return `http://localhost:${port}`;
}
