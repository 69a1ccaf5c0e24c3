// domain/fsrs.ts against ts-fsrs's published FSRS-6 vector: open-spaced-repetition/ts-fsrs, __tests__/FSRS-6.test.ts
// ("ivl_history": weights w below, ratings Good ×6, Again ×2, Good ×5, each review at the previous due time, from
// 2022-12-29 12:30 local; expected scheduled_days [0, 2, 11, 46, 163, 498, 0, 0, 2, 4, 7, 12, 21]) and its "first
// repeat" row (stability and difficulty after one review of each rating). The card's state goes through our stored
// shape (JSON) between reviews, so the vector also proves that shape loses nothing.
import assert from 'node:assert/strict';
import { fsrsParameters, fsrsStep, ratingOf, type FsrsCardState } from '../../domain/fsrs.ts';

const W = [
  0.212, 1.2931, 2.3065, 8.2956, 6.4133, 0.8334, 3.0194, 0.001, 1.8722, 0.1666, 0.796, 1.4835, 0.0614, 0.2629, 1.6483,
  0.6014, 1.8729, 0.5425, 0.0912, 0.0658, 0.1542,
];

describe('fsrsStep (FSRS-6 through ts-fsrs 5.4.2)', () => {
  it('reproduces the published interval history, with the state stored as JSON between reviews', () => {
    const parameters = fsrsParameters({ w: W });
    // Our grades for Good (4) and Again (0).
    const grades = [4, 4, 4, 4, 4, 4, 0, 0, 4, 4, 4, 4, 4];
    let state: FsrsCardState | null = null;
    let now = new Date(2022, 11, 29, 12, 30, 0, 0);
    const intervals: number[] = [];
    for (const grade of grades) {
      const step = fsrsStep(state, grade, now, parameters);
      state = JSON.parse(JSON.stringify(step.fsrs_state));
      intervals.push(step.interval_days);
      now = step.next_due_at;
    }
    assert.deepEqual(intervals, [0, 2, 11, 46, 163, 498, 0, 0, 2, 4, 7, 12, 21]);
  });

  it('gives a new card the published first-review stability and difficulty per rating', () => {
    const parameters = fsrsParameters({ w: W });
    const now = new Date(2022, 11, 29, 12, 30, 0, 0);
    const first = [0, 3, 4, 5].map((grade) => fsrsStep(null, grade, now, parameters));
    assert.deepEqual(
      first.map((s) => s.fsrs_state.stability),
      [0.212, 1.2931, 2.3065, 8.2956],
    );
    assert.deepEqual(
      first.map((s) => s.fsrs_state.difficulty),
      [6.4133, 5.11217071, 2.11810397, 1],
    );
    assert.deepEqual(
      first.map((s) => s.interval_days),
      [0, 0, 0, 8],
    );
    assert.deepEqual(
      first.map((s) => s.fsrs_state.state),
      ['learning', 'learning', 'learning', 'review'],
    );
  });

  it('maps grades 0–2 to Again, 3 Hard, 4 Good, 5 Easy, and fills unset parameters with the defaults', () => {
    assert.deepEqual([0, 1, 2, 3, 4, 5].map(ratingOf), [1, 1, 1, 2, 3, 4]);
    const defaults = fsrsParameters(null);
    assert.deepEqual([defaults.request_retention, defaults.maximum_interval, defaults.w.length], [0.9, 36500, 21]);
    assert.equal(fsrsParameters({ request_retention: 0.85 }).request_retention, 0.85);
  });
});
