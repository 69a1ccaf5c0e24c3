// Counts one request in all the fixed windows of a limiter (a minute and a day, say) in one step: in this process's
// memory here, or in Redis with one script (server/limits/redis-limit-stores.ts), so that a request costs one round trip
// however many windows it passes.
// The windows are counted in order and counting stops at the first one the request exceeds: a request refused by an
// earlier window is not counted by the later ones. A window is fixed from its first request, and a refused request
// still counts in the window that refused it (as in express-rate-limit's MemoryStore, which keeps the counts in
// memory). A request counted can be given back (a throttle that counts failures only gives back the requests
// that succeed), in the windows it was counted in that have not ended since.
import { MemoryStore, type Options } from 'express-rate-limit';

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
  /** Takes back one request `hit` counted (`counted`: what it returned), from each of those windows still running. */
  giveBack(keys: readonly string[], counted: readonly CountedWindow[]): Promise<void>;
}

/** The windows counted that have not ended (with their keys): once a window ends, its key counts the next one's requests. */
export function stillCounting(
  keys: readonly string[],
  counted: readonly CountedWindow[],
): Array<{ window: number; key: string }> {
  const now = Date.now();
  return counted.flatMap(({ resetTime }, window) => (resetTime > now ? [{ window, key: keys[window]! }] : []));
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
    async giveBack(keys, counted) {
      for (const { window, key } of stillCounting(keys, counted)) await stores[window]!.decrement(key);
    },
  };
}
