// When a failed delivery is tried again. The delays after attempts 1, 2, 3… grow roughly exponentially, then level
// off, and add up to a little over three days (about 75 h): 5 s, 1 min, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, 14 h,
// 14 h, 20 h. Each is spread by ±20 % (jitter), so endpoints that failed together are not retried in one burst.
// After the last delay's attempt fails, delivery gives up (failed). An endpoint that has been failing for three
// days is disabled. `scale` (WEBHOOK_RETRY_SCALE, tests only) shrinks all of it.
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

export const RETRY_DELAYS_MS = [
  5 * SECOND,
  MINUTE,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  5 * HOUR,
  10 * HOUR,
  10 * HOUR,
  14 * HOUR,
  14 * HOUR,
  20 * HOUR,
];
export const DISABLE_FAILING_ENDPOINT_AFTER_MS = 72 * HOUR;
const JITTER = 0.2;

/** The delay before attempt `attemptsMade + 1`, or undefined when delivery gives up after `attemptsMade` attempts. */
export function retryDelayMs(
  attemptsMade: number,
  scale: number,
  random: () => number = Math.random,
): number | undefined {
  const base = RETRY_DELAYS_MS[attemptsMade - 1];
  if (base === undefined) return undefined;
  return Math.round(base * scale * (1 - JITTER + 2 * JITTER * random()));
}

/** Whether an endpoint failing since `failingSince` should be disabled at `now`. */
export function endpointFailingTooLong(failingSince: Date, now: Date, scale: number): boolean {
  return now.getTime() - failingSince.getTime() >= DISABLE_FAILING_ENDPOINT_AFTER_MS * scale;
}
