// The rate-limit counters in Redis (REDIS_URL), shared by every process: the window counters of every limiter (one
// script a request, server/limits/window-counters.ts). Apart from server/limits/rate-limits.ts so that the Redis client
// (~1,150 modules, ~0.3 s of a start) is loaded only when REDIS_URL is set: app/main.ts imports this module on demand,
// before connecting, so loading it is never inside the bounded wait for Redis. It does so before migrating: a start
// reaches every dependency before it changes anything.
import type { Logger } from 'pino';
import { createClient, defineScript } from 'redis';
import { errorMessage } from '../../db/errors.ts';
import { guardCounter, StoreFailures } from './limit-store-guard.ts';
import { DEFAULT_REDIS_KEY_PREFIX, DEFAULT_REDIS_TIMEOUT_MS } from './redis-defaults.ts';
import type { LimitStores } from './rate-limits.ts';
import { withTimeout } from '../process/timeout.ts';
import { stillCounting, type CountedWindow, type WindowCounter } from './window-counters.ts';

export interface RedisLimitOptions {
  /** Prepended to every key, so that deployments sharing one Redis keep separate counts. */
  keyPrefix?: string;
  /** Bound on connecting and on every command; a command still unanswered then fails (and its limiter decides). */
  timeoutMs?: number;
  /** Where a failing store is reported (at most once a minute per limiter). */
  logger?: Pick<Logger, 'warn'>;
}

/** The longest pause between reconnection attempts, so counters are shared again within seconds of Redis's return. */
const MAX_RECONNECT_DELAY_MS = 1_000;

/**
 * Counters in Redis, shared by every process. Connecting is bounded: an unreachable Redis, or one that does not answer
 * a PING, throws an Error whose message is one line naming it. Afterwards the client never queues commands while
 * disconnected (they fail at once), every command has a deadline, and it reconnects by itself with a short back-off.
 */
export async function redisLimitStores(url: string, options: RedisLimitOptions = {}): Promise<LimitStores> {
  const keyPrefix = options.keyPrefix ?? DEFAULT_REDIS_KEY_PREFIX;
  const timeoutMs = options.timeoutMs ?? DEFAULT_REDIS_TIMEOUT_MS;
  let started = false;
  const client = createClient({
    url,
    scripts: { countWindows: COUNT_WINDOWS_SCRIPT, takeWindows: TAKE_WINDOWS_SCRIPT },
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
  const countWindows = (keys: string[], args: string[]) =>
    withTimeout(client.countWindows(keys, args), timeoutMs, 'Redis');
  const takeWindows = (keys: string[], args: string[]) =>
    withTimeout(client.takeWindows(keys, args), timeoutMs, 'Redis');
  const decrement = (key: string) => withTimeout(client.decr(key), timeoutMs, 'Redis');
  return {
    shared: true,
    counter: (scope, windows, onFailure) =>
      guardCounter(
        redisWindowCounter(
          windows.map((window) => `${keyPrefix}${scope}:${window.name}:`),
          windows.map((window) => window.windowMs),
          countWindows,
          decrement,
          takeWindows,
        ),
        windows,
        { scope, onFailure, failures, warn },
      ),
    failures,
    ping: async (pingTimeoutMs) => {
      await withTimeout(client.ping(), pingTimeoutMs, 'Redis');
    },
    close: async () => {
      await client.close().catch(() => client.destroy());
    },
  };
}

/** What connecting needs of a client (whatever scripts it was created with). */
interface RedisConnection {
  connect(): Promise<unknown>;
  on(event: 'error', listener: (error: unknown) => void): unknown;
  off(event: 'error', listener: (error: unknown) => void): unknown;
  ping(): Promise<unknown>;
  readonly isOpen: boolean;
  destroy(): void;
}

/**
 * Connects and sees a PING answered (a port that accepts connections need not be Redis), or throws an Error whose
 * message is one line naming Redis and the reason. The client's connect() retries for ever: the bound ends the wait.
 */
async function connectWithin(client: RedisConnection, timeoutMs: number, name: string): Promise<void> {
  let lastError: unknown;
  const onError = (error: unknown) => (lastError = error);
  client.on('error', onError);
  try {
    await withTimeout(
      client.connect().then(() => client.ping()),
      timeoutMs,
      'Redis',
    );
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
  return parsed
    ? `Redis at ${parsed.host}${parsed.pathname.replace(/^\/$/, '')}`
    : 'Redis (REDIS_URL is not a valid URL)';
}

/**
 * KEYS[i]: the count of window i; ARGV[2i-1]: its length in ms; ARGV[2i]: its limit. Returns the count and the
 * milliseconds left of each window counted, flattened. A window is fixed from its first request; a count without an
 * expiry (a give-back that met its window's end) starts a new one.
 */
export const COUNT_WINDOWS_SCRIPT = defineScript({
  SCRIPT: `
local reply = {}
for i, key in ipairs(KEYS) do
  local windowMs = tonumber(ARGV[2 * i - 1])
  local msLeft = redis.call('PTTL', key)
  local hits
  if msLeft <= 0 then
    redis.call('SET', key, 1, 'PX', windowMs)
    hits, msLeft = 1, windowMs
  else
    hits = redis.call('INCR', key)
  end
  reply[#reply + 1] = hits
  reply[#reply + 1] = msLeft
  if hits > tonumber(ARGV[2 * i]) then break end
end
return reply`,
  parseCommand(parser, keys: string[], args: string[]) {
    parser.pushKeysLength(keys);
    parser.push(...args);
  },
  transformReply: (reply: unknown) => reply as number[],
});

/**
 * KEYS[i]: the count of window i; ARGV[1]: how many requests to take; ARGV[2i]: window i's length in ms; ARGV[2i+1]:
 * its limit. Takes as many as every window has room for, the same number in each, in one step (nobody counts in
 * between). Returns that number, then the count and the milliseconds left of each window, flattened; a window not
 * counted yet (or a count without an expiry, which the next count starts afresh) shows 0 and its whole length.
 */
export const TAKE_WINDOWS_SCRIPT = defineScript({
  SCRIPT: `
local take = tonumber(ARGV[1])
local hits, left, fresh = {}, {}, {}
for i, key in ipairs(KEYS) do
  local msLeft = redis.call('PTTL', key)
  fresh[i] = msLeft <= 0
  if fresh[i] then
    hits[i], left[i] = 0, tonumber(ARGV[2 * i])
  else
    hits[i], left[i] = tonumber(redis.call('GET', key)), msLeft
  end
  local room = tonumber(ARGV[2 * i + 1]) - hits[i]
  if room < take then take = math.max(room, 0) end
end
local reply = { take }
for i, key in ipairs(KEYS) do
  if take > 0 then
    if fresh[i] then
      redis.call('SET', key, take, 'PX', left[i])
      hits[i] = take
    else
      hits[i] = redis.call('INCRBY', key, take)
    end
  end
  reply[#reply + 1] = hits[i]
  reply[#reply + 1] = left[i]
end
return reply`,
  parseCommand(parser, keys: string[], args: string[]) {
    parser.pushKeysLength(keys);
    parser.push(...args);
  },
  transformReply: (reply: unknown) => reply as number[],
});

/**
 * Counters in Redis: `run` sends the script (EVALSHA, loading it when Redis lacks it) and bounds the wait; `decrement`
 * gives a request back (DECR: a window that ends in between leaves a count without an expiry, which the script's next
 * count of that key starts afresh).
 */
export function redisWindowCounter(
  prefixes: readonly string[],
  windowsMs: readonly number[],
  run: (keys: string[], args: string[]) => Promise<number[]>,
  decrement: (key: string) => Promise<unknown>,
  runTake: (keys: string[], args: string[]) => Promise<number[]>,
): WindowCounter {
  const windowArgs = windowsMs.map(String);
  return {
    async hit(keys, limits) {
      const args: string[] = [];
      for (let i = 0; i < windowArgs.length; i++) args.push(windowArgs[i]!, String(limits[i]));
      const reply = await run(
        keys.map((key, i) => prefixes[i] + key),
        args,
      );
      const now = Date.now();
      const counted: CountedWindow[] = [];
      for (let i = 0; i < reply.length; i += 2)
        counted.push({ totalHits: Number(reply[i]), resetTime: now + Number(reply[i + 1]) });
      return counted;
    },
    async giveBack(keys, counted) {
      await Promise.all(stillCounting(keys, counted).map(({ window, key }) => decrement(prefixes[window] + key)));
    },
    async take(keys, limits, count) {
      const args = [String(count)];
      for (let i = 0; i < windowArgs.length; i++) args.push(windowArgs[i]!, String(limits[i]));
      const reply = await runTake(
        keys.map((key, i) => prefixes[i] + key),
        args,
      );
      const now = Date.now();
      const windows: CountedWindow[] = [];
      for (let i = 1; i < reply.length; i += 2)
        windows.push({ totalHits: Number(reply[i]), resetTime: now + Number(reply[i + 1]) });
      return { taken: Number(reply[0]), windows };
    },
  };
}
