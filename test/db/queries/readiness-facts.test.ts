// The two definitions of what a readiness move compares, asked the same questions on the same data, on the run's
// engine: the queries (db/queries/exams.ts upcomingPreparation and studyDays, db/queries/readiness.ts pushed, and the
// review's day in db/queries/graded-review.ts), and readiness_facts (migration 20261207_0601), which a review written
// alone reads with the card and decides on. Likewise whether readiness follows a student: readinessFollows and
// graded_review_gate's own. Should one of them change without the other, a review would be decided on other facts
// than a move in a transaction compares.
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { replaceDeckLinks, replaceTaskLinks } from '../../../db/queries/exams.ts';
import { writeGradedReviewWithFacts } from '../../../db/queries/graded-review.ts';
import {
  readinessFacts,
  readinessFollows,
  recordReadiness,
  type FactsBeforeReview,
} from '../../../db/queries/readiness.ts';
import { studentDay } from '../../../domain/student-day.ts';
import {
  completeTask,
  db,
  deleteNewStudents,
  newCard,
  newDeck,
  newExam,
  newStudent,
  newTask,
  reviewCard,
  rolledBack,
  gradedReviewWrite,
} from '../../support/query-fixture.ts';

const ZONE = 'America/New_York'; // UTC-5 in winter: 05:00Z starts the local day
const DAY_MS = 86_400_000;
const at = (iso: string) => new Date(iso);

/** Both definitions' answers for a review of `cardId` at `reviewedAt`, with exams from `fromDate`, at most `limit`. */
async function bothAnswers(userId: string, cardId: string, reviewedAt: Date, fromDate: string, limit: number) {
  const since = new Date(reviewedAt.getTime() - 13 * DAY_MS);
  const day = studentDay(reviewedAt, ZONE);
  // The queries' answer is the statement of a review's write: rolled back, so that every question sees the same data.
  const { facts: queries } = await rolledBack(db(), (trx) =>
    writeGradedReviewWithFacts(trx, gradedReviewWrite(userId, cardId, reviewedAt, ZONE), {
      fromDate,
      limit,
      zone: ZONE,
      since,
    }),
  );
  const { rows } = await sql<{ facts: FactsBeforeReview }>`select ${readinessFacts({
    userId,
    fromDate,
    limit,
    zone: ZONE,
    since,
    dayStart: day.start,
    dayEnd: day.end,
  })} as facts`.execute(db());
  return { queries, fn: rows[0]!.facts };
}

/** The facts with the arrays whose order the queries leave open (an exam's cards, the pushed states) sorted. */
function sorted(facts: FactsBeforeReview): FactsBeforeReview {
  const memory = (card: { interval_days: number; last_reviewed_ms: number | null }) =>
    `${card.interval_days}:${card.last_reviewed_ms ?? ''}`;
  return {
    ...facts,
    exams: facts.exams.map((exam) => ({
      ...exam,
      cards: [...exam.cards].sort((a, b) => memory(a).localeCompare(memory(b))),
    })),
    pushed: [...facts.pushed].sort((a, b) => a.exam_id.localeCompare(b.exam_id)),
  };
}

describe('readiness facts: the queries and readiness_facts give the same answers', () => {
  after(deleteNewStudents);

  it('on exams, links, cards, study days across local midnights, pushed states and the day studied', async () => {
    const student = await newStudent({ timeZone: ZONE });
    const [deckA, deckB, unlinked] = [await newDeck(student), await newDeck(student), await newDeck(student)];
    const created = at('2026-02-01T00:00:00Z');
    const cardsA = [
      await newCard(student, deckA, created),
      await newCard(student, deckA, created),
      await newCard(student, deckA, created),
    ];
    const cardB = await newCard(student, deckB, created);
    const other = await newCard(student, unlinked, created);
    // Reviews on several local days: 04:30Z is still the day before in New York, 05:30Z the day itself.
    await reviewCard(student, cardsA[0]!.id, at('2026-03-01T04:30:00Z'), at('2026-03-02T04:30:00Z'));
    await reviewCard(student, cardsA[1]!.id, at('2026-03-01T05:30:00Z'), at('2026-03-02T05:30:00Z'));
    await reviewCard(student, cardB.id, at('2026-03-03T12:00:00Z'), at('2026-03-04T12:00:00Z'));
    await reviewCard(student, other.id, at('2026-02-10T12:00:00Z'), at('2026-02-11T12:00:00Z')); // before the window
    const [done, open, late] = [
      await newTask(student, at('2026-03-05T00:00:00Z')),
      await newTask(student, at('2026-03-06T00:00:00Z')),
      await newTask(student, at('2026-03-07T00:00:00Z')),
    ];
    await completeTask(student, done.id, at('2026-03-02T15:00:00Z'));
    await completeTask(student, late.id, at('2026-03-04T03:00:00Z')); // 22:00 on 03-03 in New York
    const past = await newExam(student, '2026-02-20');
    const first = await newExam(student, '2026-03-10');
    const second = await newExam(student, '2026-03-12');
    const third = await newExam(student, '2026-03-20');
    await replaceDeckLinks(db(), student, first.id, [deckA, deckB]);
    await replaceDeckLinks(db(), student, second.id, [deckB]);
    await replaceDeckLinks(db(), student, past.id, [deckA]);
    await replaceTaskLinks(db(), student, first.id, [done.id, open.id]);
    await replaceTaskLinks(db(), student, third.id, [late.id]);
    await recordReadiness(db(), {
      exam_id: first.id,
      user_id: student,
      version: 1,
      state: { exam_id: first.id, readiness: { percent: 42, memory: 0.5714285714285714 } },
      moved_at: created,
    });
    await recordReadiness(db(), { exam_id: second.id, user_id: student, version: 1, state: null, moved_at: created });
    await recordReadiness(db(), {
      exam_id: past.id,
      user_id: student,
      version: 1,
      state: { percent: 7 },
      moved_at: created,
    });

    const questions: Array<[Date, string, number]> = [
      [at('2026-03-03T14:00:00Z'), '2026-03-03', 100], // a day with a review already
      [at('2026-03-04T14:00:00Z'), '2026-03-04', 100], // a day with a task completed (late, 22:00 the day before: no)
      [at('2026-03-05T14:00:00Z'), '2026-03-05', 2], // no study that day; the third exam past the limit
      [at('2026-03-01T04:45:00Z'), '2026-02-28', 100], // the evening before: the 04:30Z review's day
      [at('2026-03-15T14:00:00Z'), '2026-03-15', 100], // the first exam passed
    ];
    const seen = { studied: new Set<boolean>(), studyDays: new Set<number>(), exams: new Set<number>() };
    for (const [reviewedAt, fromDate, limit] of questions) {
      const { queries, fn } = await bothAnswers(student, cardsA[2]!.id, reviewedAt, fromDate, limit);
      assert.deepEqual(sorted(fn), sorted(queries), `the facts for a review at ${reviewedAt.toISOString()}`);
      // readiness_facts keeps every array in its order: sorting changes nothing.
      assert.deepEqual(fn, sorted(fn));
      seen.studied.add(fn.day_studied);
      seen.studyDays.add(fn.study_days);
      seen.exams.add(fn.exams.length);
    }
    // The questions did reach both sides of each fact.
    assert.deepEqual([...seen.studied].sort(), [false, true]);
    assert.ok(seen.studyDays.size >= 2, `study days ${[...seen.studyDays].join(', ')}`);
    assert.ok(seen.exams.has(2) && seen.exams.has(3), `exams ${[...seen.exams].join(', ')}`);
  });

  it('tells whether readiness follows a student as graded_review_gate does', async () => {
    const fromDate = '2026-03-05';
    /** An exam passed before `fromDate`, with `state` recorded as last pushed (null: a tombstone). */
    const pushedOfPassedExam = async (student: string, state: { percent: number } | null) => {
      const exam = await newExam(student, '2026-03-01');
      await recordReadiness(db(), { exam_id: exam.id, user_id: student, version: 1, state, moved_at: at(fromDate) });
    };
    const cases: Array<[string, (student: string) => Promise<unknown>, boolean]> = [
      ['no exam, nothing pushed', async () => {}, false],
      ['a past exam only', (student) => newExam(student, '2026-03-04'), false],
      ['an exam that day', (student) => newExam(student, fromDate), true],
      ['a tombstone only', (student) => pushedOfPassedExam(student, null), false],
      ["a passed exam's state still pushed", (student) => pushedOfPassedExam(student, { percent: 1 }), true],
    ];
    for (const [name, given, follows] of cases) {
      const student = await newStudent({ timeZone: ZONE });
      const card = (await newCard(student, await newDeck(student), at('2026-03-01T00:00:00Z'))).id;
      await given(student);
      const { rows: queries } = await sql<{
        follows: boolean;
      }>`select ${readinessFollows(db(), student, fromDate)} as follows`.execute(db());
      // The gate takes the student's lock and the card's: in a transaction rolled back.
      const gate = await rolledBack(
        db(),
        async (trx) =>
          (
            await sql<{ readiness_follows: boolean }>`select readiness_follows from graded_review_gate(${student}::uuid,
            ${card}::uuid, null, ${fromDate}::date, array['review'], ${fromDate}::date, null)`.execute(trx)
          ).rows,
      );
      assert.equal(queries[0]!.follows, follows, `the query, ${name}`);
      assert.equal(gate[0]!.readiness_follows, follows, `the gate, ${name}`);
    }
  });
});
