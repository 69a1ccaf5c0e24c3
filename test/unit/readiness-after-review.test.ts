// A graded review moves readiness from the facts as they were before it (services/readiness/readiness-after-review.ts)
// instead of reading them again: on random review sequences, what it gives must be what a full recomputation from
// the data after each review gives.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { preparationOf, type PreparationFacts } from '../../services/readiness/preparation.ts';
import { afterReview } from '../../services/readiness/readiness-after-review.ts';
import { sameState } from '../../services/readiness/readiness.ts';

const NOW = Date.parse('2026-11-27T12:00:00Z');
const DAY_MS = 86_400_000;

interface Card {
  deck: number;
  interval_days: number;
  last_reviewed_ms: number | null;
}

interface Model {
  cards: Card[];
  /** Each exam's linked decks. */
  exams: number[][];
  /** Study days (day numbers back from today, 0..20); the window holds 0..13. */
  days: Set<number>;
}

/** The facts a full read gives: each exam's linked decks and all their cards, in the model's order. */
function fullFacts(model: Model): { exams: Array<PreparationFacts & { id: string }>; study_days: number } {
  return {
    exams: model.exams.map((decks, i) => ({
      id: `exam-${i}`,
      decks: decks.map((deck) => ({ deck_id: `deck-${deck}` })),
      tasks: [{ task_id: 'task', completed: i % 2 === 0 }],
      cards: model.cards
        .filter((card) => decks.includes(card.deck))
        .map(({ interval_days, last_reviewed_ms }) => ({ interval_days, last_reviewed_ms })),
    })),
    study_days: [...model.days].filter((day) => day < 14).length,
  };
}

function states(facts: ReturnType<typeof fullFacts>) {
  const now = new Date(NOW);
  return facts.exams.map((exam) => ({
    exam_id: exam.id,
    subject: 'Anatomy',
    exam_date: '2026-12-24',
    readiness: preparationOf(exam, facts.study_days, now).readiness,
  }));
}

// Few distinct intervals and review times, so that cards with equal memory (which stand for each other) are common.
const memory = fc.record({
  interval_days: fc.integer({ min: 0, max: 4 }),
  last_reviewed_ms: fc.option(
    fc.integer({ min: 0, max: 6 }).map((days) => NOW - days * DAY_MS),
    { nil: null },
  ),
});
const model = fc.record({
  cards: fc.array(
    fc.record({ deck: fc.integer({ min: 0, max: 3 }) }).chain(({ deck }) => memory.map((m) => ({ deck, ...m }))),
    { maxLength: 25 },
  ),
  exams: fc.array(fc.uniqueArray(fc.integer({ min: 0, max: 3 }), { maxLength: 3 }), { minLength: 1, maxLength: 4 }),
  days: fc.uniqueArray(fc.integer({ min: 0, max: 20 }), { maxLength: 10 }).map((days) => new Set(days)),
});
const review = fc.record({
  card: fc.nat(),
  applied: fc.boolean(),
  interval_days: fc.integer({ min: 0, max: 40 }),
  daysAgo: fc.integer({ min: 0, max: 20 }),
  hour: fc.integer({ min: 0, max: 23 }),
});

describe('readiness after a review, from the facts before it', () => {
  it('equals a full recomputation after every review of random sequences', () => {
    fc.assert(
      fc.property(model, fc.array(review, { minLength: 1, maxLength: 30 }), (start, reviews) => {
        fc.pre(start.cards.length > 0);
        const data: Model = {
          cards: start.cards.map((card) => ({ ...card })),
          exams: start.exams,
          days: new Set(start.days),
        };
        for (const step of reviews) {
          const card = data.cards[step.card % data.cards.length]!;
          const before = { interval_days: card.interval_days, last_reviewed_ms: card.last_reviewed_ms };
          const reviewedMs = NOW - step.daysAgo * DAY_MS - step.hour * 3_600_000;
          const after = step.applied ? { interval_days: step.interval_days, last_reviewed_ms: reviewedMs } : before;
          const facts = { ...fullFacts(data), day_studied: data.days.has(step.daysAgo) };

          Object.assign(card, after);
          data.days.add(step.daysAgo);
          const moved = afterReview(facts, {
            deck_id: `deck-${card.deck}`,
            before,
            after,
            in_window: step.daysAgo < 14,
          });
          assert.ok(moved, 'the facts before the review hold the card as it was');
          const [incremental, full] = [states({ ...moved, exams: moved.exams }), states(fullFacts(data))];
          for (const [i, state] of full.entries()) {
            const { memory: a, ...rest } = incremental[i]!.readiness;
            const { memory: b, ...expected } = state.readiness;
            assert.deepEqual(rest, expected);
            // Equal cards may sit elsewhere in the list than the reviewed one: the same terms summed in another order
            // (as the database, which returns cards in no defined order, sums them on any read).
            assert.ok(a === b || (a !== null && b !== null && Math.abs(a - b) <= 1e-12), `memory ${a} vs ${b}`);
            assert.ok(sameState(incremental[i], state), 'a stream would see no difference');
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('reads again (undefined) when an exam linked to the deck does not hold the card as it was', () => {
    const facts = {
      exams: [{ decks: [{ deck_id: 'd' }], tasks: [], cards: [{ interval_days: 3, last_reviewed_ms: NOW }] }],
      study_days: 2,
      day_studied: true,
    };
    assert.equal(
      afterReview(facts, {
        deck_id: 'd',
        before: { interval_days: 1, last_reviewed_ms: null },
        after: { interval_days: 2, last_reviewed_ms: NOW },
        in_window: true,
      }),
      undefined,
    );
  });

  it('counts the review day once: not when it had study already, nor when it is outside the window', () => {
    const facts = { exams: [], study_days: 4 };
    const same = {
      deck_id: 'd',
      before: { interval_days: 1, last_reviewed_ms: null },
      after: { interval_days: 1, last_reviewed_ms: null },
    };
    assert.equal(afterReview({ ...facts, day_studied: false }, { ...same, in_window: true })!.study_days, 5);
    assert.equal(afterReview({ ...facts, day_studied: true }, { ...same, in_window: true })!.study_days, 4);
    assert.equal(afterReview({ ...facts, day_studied: false }, { ...same, in_window: false })!.study_days, 4);
  });
});
