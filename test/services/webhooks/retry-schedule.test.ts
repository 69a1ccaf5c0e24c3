// The retry schedule: growing delays that add up to about three days, spread by jitter, then giving up; a failing
// endpoint disabled after three days; WEBHOOK_RETRY_SCALE shrinks all of it for tests.
import assert from 'node:assert/strict';
import { EVENT_RETENTION_DAYS } from '../../../domain/bounds.ts';
import {
  DISABLE_FAILING_ENDPOINT_AFTER_MS,
  endpointFailingTooLong,
  RETRY_DELAYS_MS,
  retryDelayMs,
} from '../../../services/webhooks/retry-schedule.ts';

const HOUR = 3_600_000;

describe('webhook retry schedule', () => {
  it('waits longer after each failure, about three days in all, then gives up', () => {
    const total = RETRY_DELAYS_MS.reduce((a, b) => a + b, 0);
    assert.ok(total > 72 * HOUR && total < 80 * HOUR, `${total / HOUR} h`);
    for (let i = 1; i < RETRY_DELAYS_MS.length; i++) assert.ok(RETRY_DELAYS_MS[i]! >= RETRY_DELAYS_MS[i - 1]!);
    assert.equal(
      retryDelayMs(1, 1, () => 0.5),
      5_000,
    );
    assert.equal(
      retryDelayMs(RETRY_DELAYS_MS.length, 1, () => 0.5),
      20 * HOUR,
    );
    assert.equal(retryDelayMs(RETRY_DELAYS_MS.length + 1, 1), undefined);
  });

  it('spreads each delay by ±20 % and scales it', () => {
    assert.equal(
      retryDelayMs(2, 1, () => 0),
      48_000,
    );
    assert.equal(
      retryDelayMs(2, 1, () => 1),
      72_000,
    );
    assert.equal(
      retryDelayMs(2, 0.001, () => 0.5),
      60,
    );
  });

  it('disables an endpoint after three days of failures', () => {
    const since = new Date('2026-11-20T10:00:00Z');
    assert.equal(endpointFailingTooLong(since, new Date('2026-11-23T09:59:59Z'), 1), false);
    assert.equal(endpointFailingTooLong(since, new Date('2026-11-23T10:00:00Z'), 1), true);
    assert.equal(endpointFailingTooLong(since, new Date('2026-11-20T10:00:03Z'), 0.000_01), true);
  });

  it('gives up on a delivery long before its event is purged (a delivery is deleted with its event)', () => {
    // The longest a delivery can stay pending: every delay at its jitter's top, or until its endpoint is disabled.
    const longestRetries = RETRY_DELAYS_MS.reduce((sum, _, i) => sum + retryDelayMs(i + 1, 1, () => 1)!, 0);
    const longestPending = Math.max(longestRetries, DISABLE_FAILING_ENDPOINT_AFTER_MS);
    // A week's margin: the events also serve the changes feed and re-sends, which must outlive the last attempt.
    assert.ok(
      longestPending + 7 * 24 * HOUR < EVENT_RETENTION_DAYS * 24 * HOUR,
      `${longestPending / HOUR} h pending, ${EVENT_RETENTION_DAYS} days kept`,
    );
  });
});
