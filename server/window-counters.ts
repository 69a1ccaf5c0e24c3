// Counts one request in all the fixed windows of a limiter (a minute and a day, say) in one step: in this process's
// memory, or in Redis with one script, so that a request costs one round trip however many windows it passes.
// The windows are counted in order and counting stops at the first one the request exceeds: a request refused by an
// earlier window is not counted by the later ones. Each window counts like express-rate-limit's stores (its
// MemoryStore, rate-limit-redis): fixed from its first request, and a refused request still counts in the window
// that refused it.
import { MemoryStore, type Options } from 'express-rate-limit';
import { defineScript } from 'redis';

export interface CountedWindow {
  /** Requests counted in the window so far, this one included. */
  totalHits: number;
  /** When the window ends (milliseconds since the epoch). */
  resetTime: number;
}

export interface WindowCounter {
  /**
   * Counts one request: `keys[i]` in window i, whose limit is `limits[i]`. Returns the windows counted, in order;
   * the last one exceeded its limit when there are fewer than the windows.
   */
  hit(keys: readonly string[], limits: readonly number[]): Promise<CountedWindow[]>;
}

/** Counters in this process, on express-rate-limit's MemoryStore (one per window; expired keys swept by its timer). */
export function memoryWindowCounter(windowsMs: readonly number[]): WindowCounter {
  const stores = windowsMs.map((windowMs) => {
    const store = new MemoryStore();
    store.init({ windowMs } as Options);
    return store;
  });
  return {
    async hit(keys, limits) {
      const counted: CountedWindow[] = [];
      for (let i = 0; i < stores.length; i++) {
        const { totalHits, resetTime } = await stores[i]!.increment(keys[i]!);
        counted.push({ totalHits, resetTime: resetTime!.getTime() });
        if (totalHits > limits[i]!) break;
      }
      return counted;
    },
  };
}

/**
 * KEYS[i]: the count of window i; ARGV[2i-1]: its length in ms; ARGV[2i]: its limit. Returns the count and the
 * milliseconds left of each window counted, flattened. Each window is rate-limit-redis's increment script (a count
 * without an expiry starts a new window), so processes running either version share the same counts.
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

/** Counters in Redis: `run` sends the script (EVALSHA, loading it when Redis lacks it) and bounds the wait. */
export function redisWindowCounter(
  prefixes: readonly string[],
  windowsMs: readonly number[],
  run: (keys: string[], args: string[]) => Promise<number[]>,
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
      for (let i = 0; i < reply.length; i += 2) counted.push({ totalHits: Number(reply[i]), resetTime: now + Number(reply[i + 1]) });
      return counted;
    },
  };
}
