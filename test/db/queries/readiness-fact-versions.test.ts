// The version of readiness's facts (migration 20261207_0701) against the facts themselves, on the run's engine: every
// write that changes what readiness_facts reads moves the version in its own transaction, whatever path it comes by
// (here plain statements, as psql, the CLI, the sync or a cascade run them: the triggers, not the services, move it),
// and writes of what the facts do not read leave it where it was.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../../../db/connect.ts';
import { updateCardText } from '../../../db/queries/flashcards.ts';
import { readinessFacts, readinessFactsVersion, type FactsQuestion } from '../../../db/queries/readiness.ts';
import { localDate, studentDay } from '../../../domain/student-day.ts';
import {
  completeTask,
  db,
  deleteNewStudents,
  deleteWithRooms,
  newCard,
  newDeck,
  newExam,
  newStudent,
  newTask,
  reviewCard,
} from '../../support/query-fixture.ts';

const ZONE = 'UTC';
const DAY_MS = 86_400_000;
const now = new Date();

/** The question a review now asks (services/flashcards/reviews.ts asks it so). */
function question(): FactsQuestion {
  const day = studentDay(now, ZONE);
  return {
    fromDate: localDate(now, ZONE),
    limit: 5,
    zone: ZONE,
    since: new Date(now.getTime() - 14 * DAY_MS),
    dayStart: day.start,
    dayEnd: day.end,
  };
}

/** The student's facts and their version, read in one statement. */
async function factsOf(userId: string, database: Db = db()) {
  const { rows } = await sql<{ facts: unknown; version: number }>`select ${readinessFacts({ userId, ...question() })}
    as facts, ${readinessFactsVersion(database, userId)} as version`.execute(database);
  return rows[0]!;
}

/**
 * A student readiness follows: an upcoming exam with a linked deck (two cards, one reviewed yesterday), a linked open
 * task, a completed task of her own, another deck, and the exam's state pushed.
 */
async function studentWithFacts() {
  const student = await newStudent({ timeZone: ZONE });
  const deck = await newDeck(student);
  const otherDeck = await newDeck(student);
  const card = (await newCard(student, deck, now)).id;
  await newCard(student, deck, now);
  await reviewCard(student, card, new Date(now.getTime() - DAY_MS), now);
  const exam = (await newExam(student, '2099-01-01')).id;
  const task = (await newTask(student, now)).id;
  const done = (await newTask(student, now)).id;
  await completeTask(student, done, new Date(now.getTime() - 2 * DAY_MS));
  await db().insertInto('exam_decks').values({ exam_id: exam, deck_id: deck, user_id: student }).execute();
  await db().insertInto('exam_tasks').values({ exam_id: exam, task_id: task, user_id: student }).execute();
  await db()
    .insertInto('exam_readiness')
    .values({ exam_id: exam, user_id: student, version: 1, state: JSON.stringify({ percent: 1 }), moved_at: now })
    .execute();
  return { student, deck, otherDeck, card, exam, task, done };
}

type Fixture = Awaited<ReturnType<typeof studentWithFacts>>;

/** Writes of what the facts read, each by a plain statement. */
const FACT_WRITES: Record<string, (f: Fixture) => Promise<unknown>> = {
  'an exam added': (f) =>
    db().insertInto('exams').values({ user_id: f.student, subject: 'Physics', exam_date: '2099-02-01' }).execute(),
  'an exam renamed': (f) => db().updateTable('exams').set({ subject: 'Renamed' }).where('id', '=', f.exam).execute(),
  'an exam moved to another date': (f) =>
    db().updateTable('exams').set({ exam_date: '2099-01-02' }).where('id', '=', f.exam).execute(),
  'an exam removed, its links and state with it': (f) => db().deleteFrom('exams').where('id', '=', f.exam).execute(),
  'a deck linked': (f) =>
    db().insertInto('exam_decks').values({ exam_id: f.exam, deck_id: f.otherDeck, user_id: f.student }).execute(),
  'a deck unlinked': (f) => db().deleteFrom('exam_decks').where('exam_id', '=', f.exam).execute(),
  'a linked deck removed, its cards and link with it': (f) =>
    db().deleteFrom('flashcard_decks').where('id', '=', f.deck).execute(),
  'a task linked': (f) =>
    db().insertInto('exam_tasks').values({ exam_id: f.exam, task_id: f.done, user_id: f.student }).execute(),
  'a task unlinked': (f) => db().deleteFrom('exam_tasks').where('exam_id', '=', f.exam).execute(),
  'a linked task completed': (f) => completeTask(f.student, f.task, now),
  'a completed task reopened': (f) =>
    db().updateTable('tasks').set({ status: 'open', completed_at: null }).where('id', '=', f.done).execute(),
  'a completed task moved to a day already studied': (f) =>
    db()
      .updateTable('tasks')
      .set({ completed_at: new Date(now.getTime() - DAY_MS) })
      .where('id', '=', f.done)
      .execute(),
  'a task created completed': (f) =>
    sql`insert into tasks (user_id, title, due_at, status, completed_at)
      values (${f.student}, 'done before', ${now}, 'completed', ${new Date(now.getTime() - 4 * DAY_MS)})`.execute(db()),
  'a completed task removed': (f) => db().deleteFrom('tasks').where('id', '=', f.done).execute(),
  'a linked task removed, its link with it': (f) => db().deleteFrom('tasks').where('id', '=', f.task).execute(),
  'a card added to a linked deck': (f) => newCard(f.student, f.deck, now),
  "a card's memory changed": (f) =>
    db().updateTable('flashcard_cards').set({ interval_days: 9 }).where('id', '=', f.card).execute(),
  'a card moved to another deck': (f) =>
    db().updateTable('flashcard_cards').set({ deck_id: f.otherDeck }).where('id', '=', f.card).execute(),
  'a card removed': (f) => db().deleteFrom('flashcard_cards').where('id', '=', f.card).execute(),
  'a review logged on another day': (f) => reviewCard(f.student, f.card, new Date(now.getTime() - 5 * DAY_MS), now),
  'a review removed': (f) => db().deleteFrom('flashcard_reviews').where('user_id', '=', f.student).execute(),
  'a state pushed': (f) =>
    db()
      .updateTable('exam_readiness')
      .set({ state: JSON.stringify({ percent: 2 }) })
      .where('exam_id', '=', f.exam)
      .execute(),
  'a state taken back': (f) =>
    db().updateTable('exam_readiness').set({ state: null }).where('exam_id', '=', f.exam).execute(),
};

/** Writes of what the facts do not read. */
const OTHER_WRITES: Record<string, (f: Fixture) => Promise<unknown>> = {
  "a card's text edited": (f) => updateCardText(db(), f.student, f.card, { front: 'new front' }, now),
  'an open task created': (f) => newTask(f.student, now),
  "a task's title edited": (f) =>
    db().updateTable('tasks').set({ title: 'Retitled' }).where('id', '=', f.task).execute(),
  "an exam's notes edited": (f) =>
    db().updateTable('exams').set({ notes: 'bring a pen' }).where('id', '=', f.exam).execute(),
  'a deck renamed': (f) =>
    db().updateTable('flashcard_decks').set({ title: 'Renamed' }).where('id', '=', f.deck).execute(),
  "a pushed state's move time": (f) =>
    db()
      .updateTable('exam_readiness')
      .set({ moved_at: new Date(now.getTime() + 1) })
      .where('exam_id', '=', f.exam)
      .execute(),
};

describe("readiness facts' version", () => {
  after(deleteNewStudents);

  for (const [write, run] of Object.entries(FACT_WRITES)) {
    it(`moves with the facts: ${write}`, async () => {
      const fixture = await studentWithFacts();
      const before = await factsOf(fixture.student);
      await run(fixture);
      const after = await factsOf(fixture.student);
      assert.notDeepEqual(after.facts, before.facts, 'the write changes the facts');
      assert.notEqual(after.version, before.version, 'and moves their version');
    });
  }

  for (const [write, run] of Object.entries(OTHER_WRITES)) {
    it(`stays for what the facts do not read: ${write}`, async () => {
      const fixture = await studentWithFacts();
      const before = await factsOf(fixture.student);
      await run(fixture);
      const after = await factsOf(fixture.student);
      assert.deepEqual(after.facts, before.facts);
      assert.equal(after.version, before.version);
    });
  }

  it("moves once in a transaction, whatever it writes of the student's facts, and not at all when rolled back", async () => {
    const { student, deck, task } = await studentWithFacts();
    const before = await factsOf(student);
    await db()
      .transaction()
      .execute(async (trx) => {
        for (let i = 0; i < 3; i++)
          await trx
            .insertInto('flashcard_cards')
            .values({ deck_id: deck, user_id: student, front: 'f', back: 'b', next_due_at: now })
            .execute();
        await trx.updateTable('tasks').set({ status: 'completed', completed_at: now }).where('id', '=', task).execute();
      });
    const moved = await factsOf(student);
    assert.equal(moved.version, before.version + 1);
    await assert.rejects(
      db()
        .transaction()
        .execute(async (trx) => {
          await trx.deleteFrom('flashcard_cards').where('deck_id', '=', deck).execute();
          throw new Error('rolled back');
        }),
      /rolled back/,
    );
    assert.equal((await factsOf(student)).version, moved.version);
  });

  it('moves each student of a transaction that writes several', async () => {
    const [a, b] = [await studentWithFacts(), await studentWithFacts()];
    const before = [await factsOf(a.student), await factsOf(b.student)];
    await db()
      .transaction()
      .execute(async (trx) => {
        for (const { student, deck } of [a, b, a])
          await trx
            .insertInto('flashcard_cards')
            .values({ deck_id: deck, user_id: student, front: 'f', back: 'b', next_due_at: now })
            .execute();
      });
    const after = [await factsOf(a.student), await factsOf(b.student)];
    assert.ok(after[0]!.version > before[0]!.version);
    assert.ok(after[1]!.version > before[1]!.version);
  });

  it('is 0 before her first write since the version came, and goes with the student', async () => {
    const student = await newStudent({ timeZone: ZONE });
    assert.equal((await factsOf(student)).version, 0);
    const { student: deleted } = await studentWithFacts();
    assert.ok((await factsOf(deleted)).version > 0);
    assert.ok(await deleteWithRooms(db(), deleted));
    const rows = await db()
      .selectFrom('readiness_fact_versions')
      .select('version')
      .where('user_id', '=', deleted)
      .execute();
    assert.deepEqual(rows, []);
    // A write for a student who does not exist is refused by its own foreign key, not by the version's.
    await assert.rejects(
      db().insertInto('exams').values({ user_id: randomUUID(), subject: 'Nobody', exam_date: '2099-01-01' }).execute(),
      /foreign key/,
    );
  });
});
