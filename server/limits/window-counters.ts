// Counts one request in all the fixed windows of a limiter (a minute and a day, say) in one step: in this process's
// memory here, or in Redis with one script (server/limits/redis-limit-stores.ts), so that a request costs one round
// trip however many windows it passes. The windows are counted in order and counting stops at the first one the request
// exceeds: a request refused by an earlier window is not counted by the later ones. A window is fixed from its first
// request, and a refused request still counts in the window that refused it (as in express-rate-limit's MemoryStore,
// which keeps the counts in memory). A request counted can be given back (a throttle that counts failures only gives
// back the requests that succeed), in the windows it was counted in that have not ended since. A request that stands
// for several (a sync push, one per command) takes the others with `take`: as many as every window still has room for,
// none counted beyond that, so a batch larger than what is left never pushes a count past its limit.
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
  /**
   * Counts up to `count` more requests in every window at once: as many as all of them have room for (none, when one
   * is full), the same number in each. Returns how many, and every window's count after.
   */
  take(keys: readonly string[], limits: readonly number[], count: number): Promise<TakenWindows>;
}

export interface TakenWindows {
  /** Requests counted, from 0 to the count asked. */
  taken: number;
  /** Each window after the take, in order (a window not counted yet shows 0 hits and a whole window ahead). */
  windows: CountedWindow[];
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
    // One request at a time, as `hit` counts one: each count read is this request's own place in its window, so two
    // takes at once never both get the last places, and the place one did not get is given back at once.
    async take(keys, limits, count) {
      let taken = 0;
      placing: while (taken < count) {
        for (let i = 0; i < stores.length; i++) {
          const { totalHits } = await stores[i]!.increment(keys[i]!);
          if (totalHits > limits[i]!) {
            for (let j = 0; j <= i; j++) await stores[j]!.decrement(keys[j]!);
            break placing;
          }
        }
        taken += 1;
      }
      const now = Date.now();
      const windows = await Promise.all(
        stores.map(async (store, i) => {
          const info = await store.get(keys[i]!);
          return info
            ? { totalHits: info.totalHits, resetTime: info.resetTime!.getTime() }
            : { totalHits: 0, resetTime: now + windowsMs[i]! };
        }),
      );
      return { taken, windows };
    },
  };
}
