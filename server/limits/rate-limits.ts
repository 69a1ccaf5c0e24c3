// Per-key rate limits: fixed windows counted in process memory by default or in Redis
// (server/limits/redis-limit-stores.ts) so that every process behind a load balancer shares one count per key. One
// limiter serves every path: the quotas and throttles of the API surfaces, on Node's own request and response, and the
// OAuth throttles on Express (server/oauth/failure-throttle.ts). It counts all the windows of a request in one step
// (server/limits/window-counters.ts: one Redis round trip however many windows) and writes the headers
// express-rate-limit's `standardHeaders: 'draft-8'` writes, without its middleware: that one costs a store call per
// window, a SHA-256 of the key per window and request, and Express's res.append.
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StoreFailures, type OnStoreFailure } from './limit-store-guard.ts';
import { countRateLimitRefusal } from '../process/metrics.ts';
import { problems, type Problem } from '../http/problems.ts';
import { memoryWindowCounter, type WindowCounter } from './window-counters.ts';

export interface LimitWindow<P> {
  /** Names the window in the RateLimit headers and in the 429 detail. */
  name: string;
  windowMs: number;
  limitOf: (principal: P) => number;
  /** Identifies whose count this is (a key id, a user id). */
  keyOf: (principal: P) => string;
}

/** Makes the counters of limiters. */
export interface LimitStores {
  /**
   * The counter of all the windows of one limiter (see window-counters.ts), which says what happens to a request when
   * the store fails (see limit-store-guard.ts).
   */
  counter(scope: string, windows: readonly WindowShape[], onFailure: OnStoreFailure): WindowCounter;
  /** Requests let through or refused because the store failed, per limiter scope (for metrics). */
  readonly failures: StoreFailures;
  /** Whether the counts live in Redis, shared with other processes (REDIS_URL). */
  readonly shared: boolean;
  /** Resolves when the counters can be reached within `timeoutMs` (readiness); rejects otherwise. */
  ping(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

type WindowShape = Pick<LimitWindow<unknown>, 'name' | 'windowMs'>;

export function memoryLimitStores(): LimitStores {
  return {
    counter: (_scope, windows) => memoryWindowCounter(windows.map((window) => window.windowMs)),
    failures: new StoreFailures(),
    shared: false,
    ping: async () => {},
    close: async () => {},
  };
}

/** Takes back the request a limiter counted, in the windows it was counted in that are still running. */
export type GiveBack = () => Promise<void>;

/** Requests a request let through stands for beyond itself, as counted by a limiter's `takeMore`. */
export interface MoreTaken {
  /** How many of those asked were counted: from 0 to all of them. */
  taken: number;
  /** When some were not: the 429 problem the others answer. */
  refusal?: Problem;
  /**
   * The response's RateLimit header after them (replacing the one written when the request was counted) and, when
   * some did not fit, its Retry-After: when the fullest window resets.
   */
  headers: Record<string, string>;
}

/** The account's request limits (the windows of its plan's pool), for a request that stands for several. */
export type TakeMoreRequests<P> = (principal: P, count: number) => Promise<MoreTaken>;

export interface Limiter<P> {
  /** Counts the request; a 429 problem when a window is exhausted, else what gives it back. */
  (req: IncomingMessage, res: ServerResponse, principal: P): Promise<GiveBack>;
  /**
   * Counts `count` more requests for a request this limiter let through, which stands for more than one (a sync push,
   * one request per command beyond its first): as many as every window has room for, never past a limit, the same
   * in each window; `refusal` is the problem those that did not fit answer.
   */
  takeMore: TakeMoreRequests<P>;
}

/**
 * Builds a limiter: its windows are counted in order and the first exhausted one refuses with a 429 problem,
 * Retry-After and the IETF draft-8 RateLimit headers (one list member per window counted), as express-rate-limit's
 * `standardHeaders: 'draft-8'` writes them. A request refused by an earlier window is not counted by the later ones.
 * A request let through can be given back (a throttle that counts failures only gives back the successes).
 */
export function createLimiter<P>(
  scope: string,
  windows: LimitWindow<P>[],
  stores: LimitStores,
  options: { onStoreFailure: OnStoreFailure; subject?: string },
): Limiter<P> {
  const subject = options.subject ?? 'this key';
  const counter = stores.counter(scope, windows, options.onStoreFailure);
  const windowSeconds = windows.map((window) => Math.ceil(window.windowMs / 1000));
  const exhausted = (name: string, limit: number, resetSeconds: number) =>
    problems.rateLimited(
      `The per-${name} limit of ${subject} (${limit} requests) is exhausted; retry in ${resetSeconds} seconds.`,
    );
  const limiter = async (_req: IncomingMessage, res: ServerResponse, principal: P): Promise<GiveBack> => {
    const keys = windows.map((window) => window.keyOf(principal));
    const limits = windows.map((window) => window.limitOf(principal));
    const counted = await counter.hit(keys, limits);
    // One field line per window counted, up to the first exhausted one, appended at once.
    const left: string[] = [];
    const policies: string[] = [];
    let resetSeconds = 0;
    let refused = -1;
    for (let i = 0; i < counted.length && refused < 0; i++) {
      const limit = limits[i]!;
      const { totalHits, resetTime } = counted[i]!;
      resetSeconds = secondsUntil(resetTime);
      left.push(`"${windows[i]!.name}"; r=${Math.max(limit - totalHits, 0)}; t=${resetSeconds}`);
      policies.push(`"${windows[i]!.name}"; q=${limit}; w=${windowSeconds[i]}; pk=:${partitionKey(keys[i]!)}:`);
      if (totalHits > limit) refused = i;
    }
    if (!res.headersSent && left.length > 0) {
      res.appendHeader('RateLimit', left.length === 1 ? left[0]! : left);
      res.appendHeader('RateLimit-Policy', policies.length === 1 ? policies[0]! : policies);
    }
    if (refused >= 0) {
      const { name } = windows[refused]!;
      if (!res.headersSent) res.setHeader('Retry-After', String(resetSeconds));
      countRateLimitRefusal(`${scope}:${name}`);
      throw exhausted(name, limits[refused]!, resetSeconds);
    }
    return () => counter.giveBack(keys, counted);
  };
  const takeMore = async (principal: P, count: number): Promise<MoreTaken> => {
    if (count <= 0) return { taken: 0, headers: {} };
    const keys = windows.map((window) => window.keyOf(principal));
    const limits = windows.map((window) => window.limitOf(principal));
    const { taken, windows: after } = await counter.take(keys, limits, count);
    const left = after.map(({ totalHits, resetTime }, i) => ({
      remaining: Math.max(limits[i]! - totalHits, 0),
      resetSeconds: secondsUntil(resetTime),
    }));
    const headers: Record<string, string> = {
      RateLimit: left
        .map(({ remaining, resetSeconds }, i) => `"${windows[i]!.name}"; r=${remaining}; t=${resetSeconds}`)
        .join(', '),
    };
    if (taken === count) return { taken, headers };
    // The window to wait for: of those with no room left, the one that resets last (a full day outlasts a minute).
    let full = -1;
    for (let i = 0; i < left.length; i++)
      if (left[i]!.remaining === 0 && (full < 0 || left[i]!.resetSeconds > left[full]!.resetSeconds)) full = i;
    const i = Math.max(full, 0);
    const { resetSeconds } = left[i]!;
    headers['Retry-After'] = String(resetSeconds);
    countRateLimitRefusal(`${scope}:${windows[i]!.name}`);
    return { taken, refusal: exhausted(windows[i]!.name, limits[i]!, resetSeconds), headers };
  };
  return Object.assign(limiter, { takeMore });
}

const secondsUntil = (time: number) => Math.max(0, Math.ceil((time - Date.now()) / 1000));

/** Partition keys already computed: as many as there are keys and accounts in use, bounded. */
const partitionKeys = new Map<string, string>();
const KEPT_PARTITION_KEYS = 10_000;

/**
 * The `pk` of a RateLimit-Policy member: express-rate-limit's, which names the key without revealing it (the first
 * 12 hex digits of its SHA-256, in base64). Kept per key: the same few keys ask again and again.
 */
function partitionKey(key: string): string {
  let pk = partitionKeys.get(key);
  if (pk === undefined) {
    if (partitionKeys.size >= KEPT_PARTITION_KEYS) partitionKeys.clear();
    pk = Buffer.from(createHash('sha256').update(key).digest('hex').slice(0, 12)).toString('base64');
    partitionKeys.set(key, pk);
  }
  return pk;
}
