// services/flashcards/reviews.ts and readiness's facts kept between a student's reviews (facts-left.ts), on the run's
// engine. A review written alone keeps the facts it left, under the version its write left, for her next review, whose
// gate compares only that version: so every other write of the facts must move it. Each write here is a plain
// statement that moves no readiness itself (as psql, or a path that forgot readiness, would write): the next review
// must find its kept facts stale, read them again and compare readiness with the write in it. A write whose table the
// version missed would leave that review deciding on the facts from before, recording no move: these tests fail.
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { readinessFactsVersion } from '../../../db/queries/readiness.ts';
import { localDate } from '../../../domain/student-day.ts';
import type { Student } from '../../../server/auth/principal.ts';
import { recordReview } from '../../../services/flashcards/reviews.ts';
import { upcomingReadiness } from '../../../services/readiness/readiness.ts';
import { db, deleteNewStudents, newCard, newDeck, newExam, newStudent, newTask } from '../../support/query-fixture.ts';

const DAY_MS = 86_400_000;

/** A student readiness follows (an exam linked to a deck of two cards and to an open task), reviewed twice. */
async function reviewedStudent() {
  const id = await newStudent({ timeZone: 'UTC' });
  const student = { user_id: id, time_zone: 'UTC' } as Student;
  const deck = await newDeck(id);
  const start = new Date(Date.now() - DAY_MS);
  const card = (await newCard(id, deck, start)).id;
  const unseen = (await newCard(id, deck, start)).id;
  const exam = (await newExam(id, '2099-01-01', 'Anatomy')).id;
  const task = (await newTask(id, start)).id;
  await db().insertInto('exam_decks').values({ exam_id: exam, deck_id: deck, user_id: id }).execute();
  await db().insertInto('exam_tasks').values({ exam_id: exam, task_id: task, user_id: id }).execute();
  // The first review pushes the exam's state; the second moves nothing and keeps the facts it left.
  await review(student, card);
  const pushed = await state(exam);
  await review(student, card);
  assert.deepEqual(await state(exam), pushed, 'the second review moved nothing');
  return { student, deck, card, unseen, exam, task };
}

async function review(student: Student, card: string, at = new Date()) {
  assert.ok(await recordReview(db(), student, { card_id: card, grade: 4, reviewedAt: undefined }, at));
}

/** The exam's state last pushed. */
async function state(exam: string) {
  const row = await db()
    .selectFrom('exam_readiness')
    .select('state')
    .where('exam_id', '=', exam)
    .executeTakeFirstOrThrow();
  return row.state as { subject: string; readiness: { details: Record<string, number> } } | null;
}

type Fixture = Awaited<ReturnType<typeof reviewedStudent>>;

/** Writes of the facts, and what the next review's move must show of each. */
const WRITES: Array<{ write: string; run: (f: Fixture) => Promise<unknown>; shows: (f: Fixture) => Promise<void> }> = [
  {
    write: 'a linked task completed',
    run: (f) =>
      db()
        .updateTable('tasks')
        .set({ status: 'completed', completed_at: new Date() })
        .where('id', '=', f.task)
        .execute(),
    shows: async (f) => assert.equal((await state(f.exam))!.readiness.details.tasks_completed, 1),
  },
  {
    write: 'the exam renamed',
    run: (f) => db().updateTable('exams').set({ subject: 'Physiology' }).where('id', '=', f.exam).execute(),
    shows: async (f) => assert.equal((await state(f.exam))!.subject, 'Physiology'),
  },
  {
    write: 'a card added to the linked deck',
    run: (f) => newCard(f.student.user_id, f.deck, new Date()),
    shows: async (f) => assert.equal((await state(f.exam))!.readiness.details.cards, 3),
  },
  {
    write: 'a card moved out of the linked deck',
    run: async (f) => {
      const other = await newDeck(f.student.user_id);
      await db().updateTable('flashcard_cards').set({ deck_id: other }).where('id', '=', f.unseen).execute();
    },
    shows: async (f) => assert.equal((await state(f.exam))!.readiness.details.cards, 1),
  },
  {
    write: 'a task linked',
    run: async (f) => {
      const task = (await newTask(f.student.user_id, new Date())).id;
      await db()
        .insertInto('exam_tasks')
        .values({ exam_id: f.exam, task_id: task, user_id: f.student.user_id })
        .execute();
    },
    shows: async (f) => assert.equal((await state(f.exam))!.readiness.details.tasks, 2),
  },
  {
    write: 'a review logged on an earlier day',
    run: (f) =>
      sql`insert into flashcard_reviews (user_id, card_id, grade, reviewed_at, ease, repetitions, interval_days,
        next_due_at) values (${f.student.user_id}, ${f.unseen}, 3, ${new Date(Date.now() - 3 * DAY_MS)}, 2.5, 0, 0,
        ${new Date()})`.execute(db()),
    shows: async (f) => assert.equal((await state(f.exam))!.readiness.details.study_days, 2),
  },
  {
    write: 'the state pushed changed by another writer',
    run: (f) =>
      sql`update exam_readiness set state = jsonb_set(state, '{subject}', '"Elsewhere"')
        where exam_id = ${f.exam}`.execute(db()),
    shows: async (f) => assert.equal((await state(f.exam))!.subject, 'Anatomy'),
  },
  {
    write: 'the exam removed',
    run: (f) => db().deleteFrom('exams').where('id', '=', f.exam).execute(),
    shows: async (f) => assert.equal(await state(f.exam), null, 'the exam taken back from the stream'),
  },
];

describe("a student's review after another write of readiness's facts", () => {
  after(deleteNewStudents);

  for (const { write, run, shows } of WRITES) {
    it(`compares readiness with it: ${write}`, async () => {
      const fixture = await reviewedStudent();
      await run(fixture);
      await review(fixture.student, fixture.card);
      await shows(fixture);
    });
  }

  it('leaves the version of a student with no exam and no state pushed, and moves that of one with any exam', async () => {
    const id = await newStudent({ timeZone: 'UTC' });
    const student = { user_id: id, time_zone: 'UTC' } as Student;
    const card = (await newCard(id, await newDeck(id), new Date(Date.now() - DAY_MS))).id;
    const version = async () =>
      (await sql<{ version: number }>`select ${readinessFactsVersion(db(), id)} as version`.execute(db())).rows[0]!
        .version;
    const before = await version();
    await review(student, card);
    assert.equal(await version(), before, 'nobody can hold her facts: the review writes no version');
    // A past exam: readiness does not follow her today, but a reader whose today is still the exam's day would.
    await newExam(id, localDate(new Date(Date.now() - DAY_MS), 'UTC'));
    const withExam = await version();
    assert.ok(withExam > before, 'the exam moved it');
    await review(student, card);
    assert.ok((await version()) > withExam, "the review moved it: a reader may hold facts of the exam's day");
  });

  it('records a move from the facts kept between reviews as a full read finds readiness', async () => {
    const { student, unseen, exam } = await reviewedStudent();
    // The card never reviewed: its memory rises, and readiness moves, from the facts the last review left.
    const at = new Date();
    await review(student, unseen, at);
    const [fresh] = await upcomingReadiness(db(), student, at);
    assert.deepEqual(await state(exam), fresh);
  });
});
