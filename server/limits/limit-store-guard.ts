// What a rate limiter does when its counter store (Redis) fails or is too slow. Each limiter chooses:
//   'allow'  (fail open): the request goes on uncounted. For quotas, where an outage of the counters must not
//            become an outage of the API; the headers then describe a fresh window.
//   'refuse' (fail closed): a 503 problem. For throttles that guard against abuse (password guessing, sign-up
//            floods), where letting everything through while the counters are gone is the attack.
// Either way the failure is counted (for metrics) and logged at most once per interval per limiter. A request given
// back after its answer (a throttle's success) is only logged when the store fails: it has been answered already.
import { problems } from '../http/problems.ts';
import type { WindowCounter } from './window-counters.ts';

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
  warn: (
    details: { scope: string; onFailure: OnStoreFailure; reason: string; failuresSinceLastWarning: number },
    message: string,
  ) => void;
  /** At most one warning per limiter in this many milliseconds. */
  warnIntervalMs?: number;
}

/**
 * One limiter's store failures: `warn` logs at most once per interval; `fail` also counts the request and decides
 * its fate: it returns for 'allow' (the caller goes on as in a fresh window) and throws a 503 problem for 'refuse'.
 */
function failureHandling(options: GuardOptions) {
  const { scope, onFailure, failures } = options;
  const warnIntervalMs = options.warnIntervalMs ?? 60_000;
  let lastWarning = -Infinity;
  let unwarned = 0;

  const warn = (error: unknown) => {
    unwarned += 1;
    const now = Date.now();
    if (now - lastWarning < warnIntervalMs) return;
    lastWarning = now;
    const reason = error instanceof Error ? error.message || error.name : String(error);
    options.warn(
      { scope, onFailure, reason, failuresSinceLastWarning: unwarned },
      onFailure === 'allow'
        ? 'rate-limit store failed: requests pass uncounted'
        : 'rate-limit store failed: requests are refused with 503',
    );
    unwarned = 0;
  };

  /** `scopes`: where the request counts in the failure metrics (the windows it would have been counted in). */
  const fail = (error: unknown, scopes: readonly string[]) => {
    warn(error);
    if (onFailure === 'refuse') {
      failures.record(scopes[0]!, 'refused');
      throw problems.serviceUnavailable('The request limiter is unavailable.');
    }
    for (const each of scopes) failures.record(each, 'allowed');
  };

  return { warn, fail };
}

/** A limiter's window counter: the windows are named `${scope}:${name}` in the failure metrics; the warning names the limiter. */
export function guardCounter(
  counter: WindowCounter,
  windows: readonly { name: string; windowMs: number }[],
  options: GuardOptions,
): WindowCounter {
  const { warn, fail } = failureHandling(options);
  const scopes = windows.map((window) => `${options.scope}:${window.name}`);
  return {
    async hit(keys, limits) {
      try {
        return await counter.hit(keys, limits);
      } catch (error) {
        fail(error, scopes);
        const now = Date.now();
        return windows.map((window) => ({ totalHits: 1, resetTime: now + window.windowMs }));
      }
    },
    async giveBack(keys, counted) {
      await counter.giveBack(keys, counted).catch(warn);
    },
    // As a request counts: 'allow' lets them all through uncounted, 'refuse' answers 503.
    async take(keys, limits, count) {
      try {
        return await counter.take(keys, limits, count);
      } catch (error) {
        fail(error, scopes);
        const now = Date.now();
        return {
          taken: count,
          windows: windows.map((window) => ({ totalHits: count, resetTime: now + window.windowMs })),
        };
      }
    },
  };
}
