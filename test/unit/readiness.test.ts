// Readiness scenarios worked by hand from the formula in domain/readiness.ts.
import assert from 'node:assert/strict';
import { readiness, retrievability, type ReadinessInput } from '../../domain/readiness.ts';

const NOW = new Date('2026-11-22T12:00:00Z');
const daysAgo = (days: number) => new Date(NOW.getTime() - days * 86_400_000);
const close = (actual: number | null, expected: number, label: string) =>
  assert.ok(actual !== null && Math.abs(actual - expected) < 1e-6, `${label}: ${actual}, expected ${expected}`);

function input(overrides: Partial<ReadinessInput>): ReadinessInput {
  return { now: NOW, cards: [], tasks: { total: 0, completed: 0 }, study_days: 0, ...overrides };
}

describe('retrievability', () => {
  it('is exp(-t/S): 1 just after a review, 1/e when due, exp(-0.5) halfway, exp(-2) at twice the interval', () => {
    close(retrievability({ interval_days: 6, last_reviewed_at: NOW }, NOW), 1, 'just reviewed');
    close(retrievability({ interval_days: 6, last_reviewed_at: daysAgo(6) }, NOW), 0.36787944, 'due');
    close(retrievability({ interval_days: 6, last_reviewed_at: daysAgo(3) }, NOW), 0.60653066, 'halfway');
    close(retrievability({ interval_days: 6, last_reviewed_at: daysAgo(12) }, NOW), 0.13533528, 'overdue');
  });

  it('is 0 for a card never reviewed, and 1 for a review stamped slightly in the future', () => {
    assert.equal(retrievability({ interval_days: 0, last_reviewed_at: null }, NOW), 0);
    assert.equal(retrievability({ interval_days: 1, last_reviewed_at: new Date(NOW.getTime() + 3_600_000) }, NOW), 1);
  });
});

describe('readiness', () => {
  it('weighs memory 0.5, coverage 0.3, consistency 0.2 and rounds 57.5 up to 58', () => {
    // memory (1 + 0) / 2 = 0.5; coverage 3/4 = 0.75; consistency 7/14 = 0.5 → 25 + 22.5 + 10 = 57.5
    const result = readiness(
      input({
        cards: [
          { interval_days: 1, last_reviewed_at: NOW },
          { interval_days: 0, last_reviewed_at: null },
        ],
        tasks: { total: 4, completed: 3 },
        study_days: 7,
      }),
    );
    assert.deepEqual(result, {
      percent: 58,
      memory: 0.5,
      coverage: 0.75,
      consistency: 0.5,
      weights: { memory: 0.5, coverage: 0.3, consistency: 0.2 },
      details: { cards: 2, cards_reviewed: 1, tasks: 4, tasks_completed: 3, study_days: 7, window_days: 14 },
    });
  });

  it('leaves coverage out when no task is linked and scales memory and consistency to 5/7 and 2/7', () => {
    // memory = 1/e (both cards exactly due); consistency 1 → 100 × (5/7 × 0.367879 + 2/7) = 54.85 → 55
    const result = readiness(
      input({
        cards: [
          { interval_days: 2, last_reviewed_at: daysAgo(2) },
          { interval_days: 6, last_reviewed_at: daysAgo(6) },
        ],
        study_days: 14,
      }),
    );
    assert.equal(result.percent, 55);
    close(result.memory, 0.36787944, 'memory');
    assert.equal(result.coverage, null);
    close(result.weights.memory, 5 / 7, 'memory weight');
    assert.equal(result.weights.coverage, 0);
    close(result.weights.consistency, 2 / 7, 'consistency weight');
  });

  it('leaves memory out when no linked deck has cards: coverage 0.6, consistency 0.4', () => {
    // coverage 1/4, consistency 7/14 → 100 × (0.6 × 0.25 + 0.4 × 0.5) = 35
    const result = readiness(input({ tasks: { total: 4, completed: 1 }, study_days: 7 }));
    assert.equal(result.percent, 35);
    assert.equal(result.memory, null);
    assert.deepEqual(result.weights, { memory: 0, coverage: 0.6, consistency: 0.4 });
  });

  it('rests on consistency alone when nothing is linked: 0 without study, 3/14 → 21 with three study days', () => {
    const idle = readiness(input({}));
    assert.equal(idle.percent, 0);
    assert.deepEqual(idle.weights, { memory: 0, coverage: 0, consistency: 1 });
    assert.equal(readiness(input({ study_days: 3 })).percent, 21);
  });

  it('is 100 with every card just reviewed, every task done and a study day each of the last 14', () => {
    const result = readiness(
      input({
        cards: [
          { interval_days: 6, last_reviewed_at: NOW },
          { interval_days: 15, last_reviewed_at: NOW },
        ],
        tasks: { total: 2, completed: 2 },
        study_days: 14,
      }),
    );
    assert.equal(result.percent, 100);
  });

  it('caps study days at the 14-day window', () => {
    const result = readiness(input({ study_days: 20 }));
    assert.equal(result.consistency, 1);
    assert.equal(result.details.study_days, 14);
  });
});
