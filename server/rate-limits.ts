// Per-key rate limits: fixed windows counted by express-rate-limit, in process memory by default or in Redis
// (rate-limit-redis) so that every process behind a load balancer shares one count per key.
import type { Request, Response } from 'express';
import { MemoryStore, rateLimit, type Store } from 'express-rate-limit';
import type { Logger } from 'pino';
import { RedisStore } from 'rate-limit-redis';
import { createClient } from 'redis';
import { errorMessage } from '../db/connect.ts';
import { guardStore, StoreFailures, type OnStoreFailure } from './limit-store-guard.ts';
import { countRateLimitRefusal } from './metrics.ts';
import { problems } from './problems.ts';
import { withTimeout } from './timeout.ts';

export interface LimitWindow<P> {
  /** Names the window in the RateLimit headers and in the 429 detail. */
  name: string;
  windowMs: number;
  limitOf: (principal: P) => number;
  /** Identifies whose count this is (a key id, a user id). */
  keyOf: (principal: P) => string;
}

/** Makes one counter store per window (express-rate-limit needs a store per limiter). */
export interface LimitStores {
  /** A store for one limiter, which says what happens to a request when the store fails (see limit-store-guard.ts). */
  create(scope: string, onFailure: OnStoreFailure): Store;
  /** Requests let through or refused because the store failed, per limiter scope (for metrics). */
  readonly failures: StoreFailures;
  /** Whether the counts live in Redis, shared with other processes (REDIS_URL). */
  readonly shared: boolean;
  /** Resolves when the counters can be reached within `timeoutMs` (readiness); rejects otherwise. */
  ping(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

export function memoryLimitStores(): LimitStores {
  return { create: () => new MemoryStore(), failures: new StoreFailures(), shared: false, ping: async () => {}, close: async () => {} };
}

export interface RedisLimitOptions {
  /** Prepended to every key, so that deployments sharing one Redis keep separate counts. */
  keyPrefix?: string;
  /** Bound on connecting and on every command; a command still unanswered then fails (and its limiter decides). */
  timeoutMs?: number;
  /** Where a failing store is reported (at most once a minute per limiter). */
  logger?: Pick<Logger, 'warn'>;
}

export const DEFAULT_REDIS_KEY_PREFIX = 'rl:';
export const DEFAULT_REDIS_TIMEOUT_MS = 1_000;
/** The longest pause between reconnection attempts, so counters are shared again within seconds of Redis's return. */
const MAX_RECONNECT_DELAY_MS = 1_000;

/**
 * Counters in Redis, shared by every process. Connecting is bounded: an unreachable Redis throws an Error whose
 * message is one line naming it. Afterwards the client never queues commands while disconnected (they fail at
 * once), every command has a deadline, and it reconnects by itself with a short back-off.
 */
export async function redisLimitStores(url: string, options: RedisLimitOptions = {}): Promise<LimitStores> {
  const keyPrefix = options.keyPrefix ?? DEFAULT_REDIS_KEY_PREFIX;
  const timeoutMs = options.timeoutMs ?? DEFAULT_REDIS_TIMEOUT_MS;
  let started = false;
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: {
      connectTimeout: timeoutMs,
      // At start-up the first failure is final (a clear exit beats a silent wait); later, retry for ever.
      reconnectStrategy: (retries, cause) => (started ? Math.min(50 * 2 ** retries, MAX_RECONNECT_DELAY_MS) : cause),
    },
  });
  client.on('error', () => {}); // failures surface on the commands themselves; avoid an unhandled 'error' event
  await connectWithin(client, timeoutMs * 2, describeRedis(url));
  started = true;
  const failures = new StoreFailures();
  const warn = options.logger ? options.logger.warn.bind(options.logger) : () => {};
  return {
    shared: true,
    create: (scope, onFailure) =>
      guardStore(new RedisStore({ sendCommand: (...args: string[]) => withTimeout(client.sendCommand(args), timeoutMs, 'Redis'), prefix: `${keyPrefix}${scope}:` }), {
        scope,
        onFailure,
        failures,
        warn,
      }),
    failures,
    ping: async (pingTimeoutMs) => {
      await withTimeout(client.ping(), pingTimeoutMs, 'Redis');
    },
    close: async () => {
      await client.close().catch(() => client.destroy());
    },
  };
}

/**
 * `work`, or a rejection once `timeoutMs` has passed. The client's own command timeout ends only the wait to be
 * written, and its connect() retries for ever: this ends the wait for the reply, and for a connection.
 */
/** Connects, or throws an Error whose message is one line naming Redis and the reason. */
async function connectWithin(client: ReturnType<typeof createClient>, timeoutMs: number, name: string): Promise<void> {
  let lastError: unknown;
  const onError = (error: unknown) => (lastError = error);
  client.on('error', onError);
  try {
    await withTimeout(client.connect(), timeoutMs, 'Redis');
  } catch (error) {
    if (client.isOpen) client.destroy();
    throw new Error(`cannot reach ${name}: ${errorMessage(lastError ?? error)}`);
  } finally {
    client.off('error', onError);
  }
}

/** Host, port and database of a Redis URL, never its password. */
function describeRedis(url: string): string {
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  return parsed ? `Redis at ${parsed.host}${parsed.pathname.replace(/^\/$/, '')}` : 'Redis (REDIS_URL is not a valid URL)';
}

const PRINCIPAL = Symbol('rate-limited principal');

/**
 * Builds the limiter of a surface: its windows run in order and the first exhausted one refuses with a 429
 * problem, Retry-After and the IETF draft-8 RateLimit headers (one list member per window). A request refused
 * by an earlier window is not counted by the later ones.
 */
export function createLimiter<P>(
  scope: string,
  windows: LimitWindow<P>[],
  stores: LimitStores,
  options: { onStoreFailure: OnStoreFailure; subject?: string },
) {
  const subject = options.subject ?? 'this key';
  const principalOf = (res: Response) => res.locals[PRINCIPAL as never] as P;
  const middlewares = windows.map((window) =>
    rateLimit({
      windowMs: window.windowMs,
      limit: (_req, res) => window.limitOf(principalOf(res)),
      keyGenerator: (_req, res) => window.keyOf(principalOf(res)),
      identifier: window.name,
      standardHeaders: 'draft-8',
      legacyHeaders: false,
      store: stores.create(`${scope}:${window.name}`, options.onStoreFailure),
      handler: (_req, res, next) => {
        const limit = window.limitOf(principalOf(res));
        const retryAfter = res.getHeader('Retry-After');
        countRateLimitRefusal(`${scope}:${window.name}`);
        next(problems.rateLimited(`The per-${window.name} limit of ${subject} (${limit} requests) is exhausted; retry in ${retryAfter} seconds.`));
      },
    }),
  );
  return async (req: Request, res: Response, principal: P): Promise<void> => {
    res.locals[PRINCIPAL as never] = principal as never;
    for (const middleware of middlewares) {
      await new Promise<void>((resolve, reject) => {
        void middleware(req, res, (error?: unknown) => (error ? reject(error) : resolve()));
      });
    }
  };
}
