// What a rate limiter does when its counter store (Redis) fails or is too slow. Each limiter chooses:
//   'allow'  (fail open): the request goes on uncounted. For quotas, where an outage of the counters must not
//            become an outage of the API; the headers then describe a fresh window.
//   'refuse' (fail closed): a 503 problem. For throttles that guard against abuse (password guessing, sign-up
//            floods), where letting everything through while the counters are gone is the attack.
// Either way the failure is counted (for metrics) and logged at most once per interval per limiter.
import type { IncrementResponse, Options, Store } from 'express-rate-limit';
import { problems } from './problems.ts';

export type OnStoreFailure = 'allow' | 'refuse';

export interface StoreFailureCount {
  /** Requests let through uncounted because the store failed. */
  allowed: number;
  /** Requests refused with a 503 because the store failed. */
  refused: number;
}

/** Store failures per limiter scope since start; read by metrics, never reset. */
export class StoreFailures {
  readonly byScope = new Map<string, StoreFailureCount>();

  record(scope: string, outcome: keyof StoreFailureCount): void {
    const count = this.byScope.get(scope) ?? { allowed: 0, refused: 0 };
    count[outcome] += 1;
    this.byScope.set(scope, count);
  }
}

export interface GuardOptions {
  scope: string;
  onFailure: OnStoreFailure;
  failures: StoreFailures;
  warn: (details: { scope: string; onFailure: OnStoreFailure; reason: string; failuresSinceLastWarning: number }, message: string) => void;
  /** At most one warning per limiter in this many milliseconds. */
  warnIntervalMs?: number;
}

export function guardStore(store: Store, options: GuardOptions): Store {
  const { scope, onFailure, failures } = options;
  const warnIntervalMs = options.warnIntervalMs ?? 60_000;
  let windowMs = 60_000;
  let lastWarning = -Infinity;
  let unwarned = 0;

  const failed = (error: unknown) => {
    unwarned += 1;
    const now = Date.now();
    if (now - lastWarning < warnIntervalMs) return;
    lastWarning = now;
    const reason = error instanceof Error ? error.message || error.name : String(error);
    options.warn(
      { scope, onFailure, reason, failuresSinceLastWarning: unwarned },
      onFailure === 'allow' ? 'rate-limit store failed: requests pass uncounted' : 'rate-limit store failed: requests are refused with 503',
    );
    unwarned = 0;
  };

  return {
    ...(store.prefix === undefined ? {} : { prefix: store.prefix }),
    ...(store.localKeys === undefined ? {} : { localKeys: store.localKeys }),
    init(config: Options) {
      windowMs = config.windowMs;
      return store.init?.(config);
    },
    async increment(key: string): Promise<IncrementResponse> {
      try {
        return await store.increment(key);
      } catch (error) {
        failed(error);
        if (onFailure === 'refuse') {
          failures.record(scope, 'refused');
          throw problems.serviceUnavailable('The request limiter is unavailable.');
        }
        failures.record(scope, 'allowed');
        return { totalHits: 1, resetTime: new Date(Date.now() + windowMs) };
      }
    },
    // Corrections after the response (skipFailedRequests, skipSuccessfulRequests): the request is already answered.
    async decrement(key: string) {
      await Promise.resolve(store.decrement(key)).catch(failed);
    },
    async resetKey(key: string) {
      await Promise.resolve(store.resetKey(key)).catch(failed);
    },
  };
}
