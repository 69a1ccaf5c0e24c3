// The facts each student's last review left for her next (services/flashcards/facts-left.ts): given back only for the
// same question, once, and bounded both by students and by the cards their facts hold in all.
import assert from 'node:assert/strict';
import type { FactsBeforeReview, FactsQuestion } from '../../../db/queries/readiness.ts';
import { FACTS_LEFT_BOUNDS, FactsLeft, type VersionedFacts } from '../../../services/flashcards/facts-left.ts';

const question: FactsQuestion = {
  fromDate: '2026-12-07',
  limit: 5,
  zone: 'Asia/Almaty',
  since: new Date('2026-11-30T19:00:00Z'),
  dayStart: new Date('2026-12-06T19:00:00Z'),
  dayEnd: new Date('2026-12-07T19:00:00Z'),
};

/** Facts of one upcoming exam whose linked deck holds `cards` cards, at a version. */
function factsWith(cards: number): VersionedFacts {
  const facts: FactsBeforeReview = {
    exams: [
      {
        id: '0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9',
        subject: 'Calculus',
        exam_date: '2026-12-20',
        decks: [{ deck_id: '7d0c6a55-2a0e-4c1e-9a52-1f2b3c4d5e6f' }],
        tasks: [],
        cards: Array.from({ length: cards }, (_, i) => ({ interval_days: i, last_reviewed_ms: null })),
      },
    ],
    study_days: 3,
    pushed: [],
    day_studied: true,
  };
  return { facts, version: 7 };
}

describe('the facts a review leaves for the next', () => {
  it('gives them back once, with their version, and only for the same question', () => {
    const left = new FactsLeft();
    const facts = factsWith(2);
    left.keep('a', question, facts);
    assert.deepEqual(left.take('a', question), facts);
    assert.equal(left.take('a', question), undefined, 'taken once');
    left.keep('a', question, facts);
    assert.equal(left.take('a', { ...question, dayEnd: new Date('2026-12-08T19:00:00Z') }), undefined, 'another day');
    assert.deepEqual(left.held, { students: 0, cards: 0 }, 'forgotten when the question differs');
  });

  it('forgets the oldest student past its bound of students', () => {
    const left = new FactsLeft({ students: 2, cards: 1_000 });
    for (const id of ['a', 'b', 'c']) left.keep(id, question, factsWith(1));
    assert.deepEqual(left.held, { students: 2, cards: 2 });
    assert.equal(left.take('a', question), undefined, 'the oldest forgotten');
    assert.ok(left.take('c', question));
  });

  it('forgets the oldest students while the cards held in all would pass their bound', () => {
    const left = new FactsLeft({ students: 1_000, cards: 10 });
    left.keep('a', question, factsWith(4));
    left.keep('b', question, factsWith(4));
    left.keep('c', question, factsWith(4));
    assert.deepEqual(left.held, { students: 2, cards: 8 }, 'a forgotten for c');
    assert.equal(left.take('a', question), undefined);
    left.keep('d', question, factsWith(10));
    assert.deepEqual(left.held, { students: 1, cards: 10 }, 'everyone forgotten for facts at the bound');
    assert.ok(left.take('d', question));
  });

  it('keeps no facts that alone hold more cards than the bound, and forgets nobody for them', () => {
    const left = new FactsLeft({ students: 1_000, cards: 10 });
    left.keep('a', question, factsWith(4));
    left.keep('b', question, factsWith(11));
    assert.deepEqual(left.held, { students: 1, cards: 4 });
    assert.equal(left.take('b', question), undefined);
    assert.ok(left.take('a', question));
  });

  it('counts a student kept again once, with her new facts', () => {
    const left = new FactsLeft({ students: 1_000, cards: 10 });
    left.keep('a', question, factsWith(6));
    left.keep('a', question, factsWith(8));
    assert.deepEqual(left.held, { students: 1, cards: 8 });
  });

  it('holds the process to 1,000 students and 200,000 cards by default', () => {
    assert.deepEqual(FACTS_LEFT_BOUNDS, { students: 1_000, cards: 200_000 });
    const left = new FactsLeft();
    for (let i = 0; i < 30; i++) left.keep(`s${i}`, question, factsWith(10_000));
    assert.deepEqual(left.held, { students: 20, cards: 200_000 });
  });
});
