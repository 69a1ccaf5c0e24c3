// The xp table of domain/xp.ts: amounts by grade, on-time tasks, readiness milestones and the daily cap.
import assert from 'node:assert/strict';
import {
  cappedAmount,
  DAILY_CAP,
  focusClaim,
  isCapped,
  readinessClaims,
  reviewClaim,
  taskClaim,
  TASK_ON_TIME_XP,
} from '../../domain/xp.ts';

describe('xp rules', () => {
  it('pays a review by grade, keyed by card and local day so a card earns once a day', () => {
    assert.deepEqual(
      [0, 1, 2, 3, 4, 5].map((grade) => reviewClaim('c1', grade, '2026-11-23').amount),
      [1, 1, 1, 2, 3, 3],
    );
    assert.equal(reviewClaim('c1', 5, '2026-11-23').key, reviewClaim('c1', 0, '2026-11-23').key);
    assert.notEqual(reviewClaim('c1', 5, '2026-11-23').key, reviewClaim('c1', 5, '2026-11-24').key);
    assert.notEqual(reviewClaim('c1', 5, '2026-11-23').key, reviewClaim('c2', 5, '2026-11-23').key);
  });

  it('pays a task completed by its due time, nothing for a late one, and keys it by the task alone', () => {
    const due = new Date('2026-11-23T18:00:00Z');
    assert.equal(taskClaim('t1', due, due, '2026-11-23').amount, TASK_ON_TIME_XP);
    assert.equal(taskClaim('t1', due, new Date(due.getTime() + 1), '2026-11-23').amount, 0);
    assert.equal(taskClaim('t1', due, due, '2026-11-23').key, taskClaim('t1', due, due, '2026-12-01').key);
  });

  it('claims each readiness milestone reached, once per exam and milestone', () => {
    assert.deepEqual(readinessClaims('e1', 49, '2026-11-23'), []);
    assert.deepEqual(
      readinessClaims('e1', 80, '2026-11-23').map((c) => [c.key, c.amount]),
      [
        ['readiness:e1:50', 20],
        ['readiness:e1:75', 30],
      ],
    );
    assert.equal(readinessClaims('e1', 100, '2026-11-23').length, 3);
  });

  it('claims 1 xp per whole 5 minutes of a finished focus session, once per session', () => {
    assert.deepEqual(focusClaim('s1', 25 * 60_000, '2026-11-27'), {
      key: 'focus:s1',
      source: 'focus',
      amount: 5,
      localDate: '2026-11-27',
    });
    assert.equal(focusClaim('s1', 4 * 60_000, '2026-11-27').amount, 0);
    assert.equal(focusClaim('s1', 180 * 60_000, '2026-11-27').amount, 36);
  });

  it('caps reviews, tasks and focus sessions per day, not milestones', () => {
    assert.deepEqual(
      [isCapped('review'), isCapped('task'), isCapped('focus'), isCapped('readiness')],
      [true, true, true, false],
    );
    assert.equal(cappedAmount(3, 0), 3);
    assert.equal(cappedAmount(3, DAILY_CAP - 2), 2);
    assert.equal(cappedAmount(10, DAILY_CAP), 0);
    assert.equal(cappedAmount(10, DAILY_CAP + 5), 0);
  });
});
