// How stale each derived figure may be is stated in docs/features.md ("How fresh each figure is") and enforced in code:
// the caches' age bounds (db/invalidated-cache.ts, tested as a mechanism in test/db/invalidated-cache.test.ts), the
// readiness streams' catch-up and the last activity's step. This holds each stated bound to the number the code uses,
// so that a changed bound fails here until the words say it too.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { BOARDS_KEPT_AT_MOST_MS } from '../../db/queries/leaderboards.ts';
import { STATS_KEPT_AT_MOST_MS } from '../../db/queries/stats.ts';
import { LAST_ACTIVE_STEP_SECONDS } from '../../db/queries/streak.ts';
import { READINESS_CATCH_UP_MS } from '../../services/readiness/readiness-groups.ts';

const features = readFileSync(new URL('../../docs/features.md', import.meta.url), 'utf8');

/** The figure's row of the table, and the seconds its second column states. */
function statedSeconds(figure: string): number {
  const row = features.split('\n').find((line) => line.startsWith(`| ${figure} |`));
  assert.ok(row, `docs/features.md states how stale ${figure} can be`);
  const seconds = /\| (?:at most|under) (\d+) s\b/.exec(row)?.[1];
  assert.ok(seconds, row);
  return Number(seconds);
}

describe('staleness bounds: docs/features.md states what the code enforces', () => {
  it('the caches, the readiness streams and the last activity', () => {
    assert.equal(statedSeconds('`/api/v1/stats`') * 1000, STATS_KEPT_AT_MOST_MS);
    assert.equal(statedSeconds('partner leaderboards') * 1000, BOARDS_KEPT_AT_MOST_MS);
    assert.equal(statedSeconds('a readiness stream') * 1000, READINESS_CATCH_UP_MS);
    assert.equal(
      statedSeconds('the last activity (`last_active_at`, the 30-day active window)'),
      LAST_ACTIVE_STEP_SECONDS,
    );
  });
});
