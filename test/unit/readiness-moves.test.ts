// What counts as a move of an exam's readiness for the stream (services/readiness/readiness.ts), and the notification
// payload that announces one.
import assert from 'node:assert/strict';
import { parseMove, sameState, type ExamReadinessState } from '../../services/readiness/readiness.ts';

const state: ExamReadinessState = {
  exam_id: '2b3c4d5e-6f70-4a1b-9c2d-3e4f5a6b7c8d',
  subject: 'Biology',
  exam_date: '2026-11-27',
  readiness: {
    percent: 61,
    memory: 0.62,
    coverage: 0.5,
    consistency: 0.5,
    weights: { memory: 0.5, coverage: 0.3, consistency: 0.2 },
    details: { cards: 20, cards_reviewed: 14, tasks: 2, tasks_completed: 1, study_days: 7, window_days: 14 },
  },
};
const withReadiness = (changes: Partial<ExamReadinessState['readiness']>): ExamReadinessState => ({
  ...state,
  readiness: { ...state.readiness, ...changes },
});

describe('readiness moves', () => {
  it('sees no move in the same state, whatever the order of its stored keys, nor in a moment of memory decay', () => {
    const reordered = {
      ...state,
      readiness: {
        ...state.readiness,
        details: { window_days: 14, study_days: 7, tasks_completed: 1, tasks: 2, cards_reviewed: 14, cards: 20 },
      },
    };
    assert.equal(sameState(reordered, state), true);
    assert.equal(sameState(state, withReadiness({ memory: 0.6201 })), true);
  });

  it('sees a move in the percent, a component, a count, the subject or the date, and for an exam never pushed', () => {
    assert.equal(sameState(state, withReadiness({ percent: 62 })), false);
    assert.equal(sameState(state, withReadiness({ memory: 0.65 })), false);
    assert.equal(sameState(state, withReadiness({ coverage: null })), false);
    assert.equal(
      sameState(state, withReadiness({ details: { ...state.readiness.details, cards_reviewed: 15 } })),
      false,
    );
    assert.equal(sameState(state, { ...state, subject: 'Cell biology' }), false);
    assert.equal(sameState(state, { ...state, exam_date: '2026-11-28' }), false);
    assert.equal(sameState(undefined, state), false);
  });

  it('reads the student and version of a notification, and nothing from a malformed one', () => {
    assert.deepEqual(parseMove(`${state.exam_id}:42`), { userId: state.exam_id, version: 42 });
    assert.equal(parseMove('no-version'), undefined);
    assert.equal(parseMove(':42'), undefined);
    assert.equal(parseMove('user:forty'), undefined);
  });
});
