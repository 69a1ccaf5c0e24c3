// db/queries/graded-review.ts on the run's engine: whether a review's local day had study before it (what a readiness
// move compares), read from the day's own instants in the student's zone.
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { LAST_ACTIVE_STEP_SECONDS } from '../../../db/queries/streak.ts';
import { lockCardForReview, readCardForReview } from '../../../db/queries/flashcards.ts';
import {
  writeGradedReviewAlone,
  writeGradedReviewFollowed,
  writeGradedReviewWithFacts,
} from '../../../db/queries/graded-review.ts';
import { connect, type Db } from '../../../db/connect.ts';
import { insertExam, replaceDeckLinks, replaceTaskLinks } from '../../../db/queries/exams.ts';
import { recordReadiness, type FactsQuestion } from '../../../db/queries/readiness.ts';
import { lockStudent, retriedTransaction } from '../../../db/student-transaction.ts';
import { recordReview } from '../../../services/flashcards/reviews.ts';
import { localDate, studentDay } from '../../../domain/student-day.ts';
import {
  completeTask,
  db,
  deleteNewStudents,
  newCard,
  newDeck,
  newExam,
  newStudent,
  newTask,
  rolledBack,
  gradedReviewWrite,
} from '../../support/query-fixture.ts';
import { testDatabase } from '../../support/shared-database.ts';

const ZONE = 'Asia/Almaty'; // UTC+5: 19:00Z starts the next local day
const at = (iso: string) => new Date(iso);

async function review(userId: string, cardId: string, reviewedAt: Date) {
  const facts = await reviewFacts(userId, cardId, reviewedAt);
  assert.ok(facts, 'a student with an upcoming exam: readiness follows');
  return facts.day_studied;
}

/** What a review at `reviewedAt` asks of readiness's facts (as services/flashcards/reviews.ts asks it). */
function questionOf(reviewedAt: Date): FactsQuestion {
  const day = studentDay(reviewedAt, ZONE);
  return {
    fromDate: localDate(reviewedAt, ZONE),
    limit: 5,
    zone: ZONE,
    since: new Date(reviewedAt.getTime() - 14 * 86_400_000),
    dayStart: day.start,
    dayEnd: day.end,
  };
}

async function reviewFacts(userId: string, cardId: string, reviewedAt: Date) {
  const day = localDate(reviewedAt, ZONE);
  const write = gradedReviewWrite(userId, cardId, reviewedAt, ZONE);
  const { facts } = await writeGradedReviewWithFacts(db(), write, {
    fromDate: day,
    limit: 5,
    zone: ZONE,
    since: new Date(reviewedAt.getTime() - 14 * 86_400_000),
  });
  return facts;
}

describe('graded review facts', () => {
  after(deleteNewStudents);

  it("tells whether the review's local day had study before it: reviews and completed tasks, by local midnights", async () => {
    const student = await newStudent({ timeZone: ZONE });
    const card = (await newCard(student, await newDeck(student), at('2026-03-01T00:00:00Z'))).id;
    await newExam(student, '2026-06-01');
    // 18:30Z is 23:30 on 03-02 in Almaty; 19:30Z is already 03-03.
    assert.equal(await review(student, card, at('2026-03-02T18:30:00Z')), false, 'the first review of 03-02');
    assert.equal(await review(student, card, at('2026-03-02T18:59:00Z')), true, 'a second review of 03-02');
    assert.equal(
      await review(student, card, at('2026-03-02T19:30:00Z')),
      false,
      'the first review of 03-03, 31 minutes after one of 03-02',
    );
    assert.equal(await review(student, card, at('2026-03-03T18:59:59Z')), true, 'the last second of 03-03');

    // A task completed on 03-04 (local) makes it a studied day for a review later that day, not for 03-05.
    const task = await newTask(student, at('2026-03-04T12:00:00Z'));
    await completeTask(student, task.id, at('2026-03-03T20:00:00Z'));
    assert.equal(await review(student, card, at('2026-03-04T10:00:00Z')), true, 'a task completed on 03-04');
    assert.equal(await review(student, card, at('2026-03-04T19:00:00Z')), false, 'the first review of 03-05');
  });

  it("moves the student's row for a new study day or a last activity a step further on, and not for a review within the step", async () => {
    const student = await newStudent({ timeZone: ZONE });
    const card = (await newCard(student, await newDeck(student), at('2026-03-01T00:00:00Z'))).id;
    const row = async () =>
      (
        await sql<{ version: string; last_active_at: Date | null; last_study_date: string | null; streak: number }>`
          select xmin::text as version, last_active_at, last_study_date, streak from users where id = ${student}`.execute(
          db(),
        )
      ).rows[0]!;
    const first = at('2026-03-02T10:00:00Z');
    await reviewFacts(student, card, first);
    const counted = await row();
    assert.equal(counted.last_active_at?.toISOString(), first.toISOString());
    assert.equal(counted.last_study_date, '2026-03-02');

    const step = LAST_ACTIVE_STEP_SECONDS * 1000;
    await reviewFacts(student, card, new Date(first.getTime() + step - 1000));
    assert.deepEqual(await row(), counted, 'a review within the step: the same version of the row');
    await reviewFacts(student, card, new Date(first.getTime() - 3_600_000));
    assert.deepEqual(await row(), counted, 'an earlier review synced late: the last activity does not move back');

    const later = new Date(first.getTime() + step);
    await reviewFacts(student, card, later);
    const moved = await row();
    assert.notEqual(moved.version, counted.version);
    assert.equal(moved.last_active_at?.toISOString(), later.toISOString(), 'a step further on');

    // 19:00:20Z is the next local day, thirty seconds after a review: the day counts though the activity does not move.
    await reviewFacts(student, card, at('2026-03-02T18:59:50Z'));
    const evening = await row();
    await reviewFacts(student, card, at('2026-03-02T19:00:20Z'));
    const nextDay = await row();
    assert.equal(nextDay.last_study_date, '2026-03-03');
    assert.equal(nextDay.streak, evening.streak + 1);
    assert.equal(nextDay.last_active_at?.toISOString(), evening.last_active_at?.toISOString());
  });

  it('tells whether readiness follows the student: an upcoming exam or a state pushed, read after the lock', async () => {
    const student = await newStudent({ timeZone: ZONE });
    const card = (await newCard(student, await newDeck(student), at('2026-03-01T00:00:00Z'))).id;
    const follows = async (reviewedAt: Date) => {
      const day = localDate(reviewedAt, ZONE);
      const locked = await rolledBack(db(), (trx) => lockCardForReview(trx, student, card, day));
      const { readinessFollows } = await writeGradedReviewFollowed(
        db(),
        gradedReviewWrite(student, card, reviewedAt, ZONE),
        day,
      );
      assert.equal(locked?.readinessFollows, readinessFollows, 'the card read and the write agree');
      return readinessFollows;
    };
    assert.equal(await follows(at('2026-03-02T10:00:00Z')), false, 'no exam');
    const exam = await newExam(student, '2026-03-01');
    assert.equal(await follows(at('2026-03-02T11:00:00Z')), false, 'an exam that has passed');
    await recordReadiness(db(), {
      exam_id: exam.id,
      user_id: student,
      version: 1,
      state: { exam_id: exam.id },
      moved_at: new Date(),
    });
    assert.equal(await follows(at('2026-03-02T12:00:00Z')), true, 'a state pushed, to take back');
    await db().deleteFrom('exam_readiness').where('user_id', '=', student).execute();
    await newExam(student, '2026-03-02');
    assert.equal(await follows(at('2026-03-02T13:00:00Z')), true, 'an exam today');
  });

  it('compares readiness in full when an exam came while the review waited for the student (PostgreSQL)', async function () {
    if (!process.env.DATABASE_URL) return this.skip(); // one connection embedded: nothing runs while a review waits
    const student = await newStudent({ timeZone: ZONE });
    const card = (await newCard(student, await newDeck(student), at('2026-03-01T00:00:00Z'))).id;
    const now = new Date();
    const versions = async () =>
      (await db().selectFrom('readiness_versions').select('version').where('user_id', '=', student).execute()).length;
    let review: Promise<unknown> | undefined;
    const other = connect({ databaseUrl: testDatabase().url! });
    after(() => other.destroy());
    await db()
      .transaction()
      .execute(async (trx) => {
        await lockStudent(trx, student);
        review = retriedTransaction(other, (other) =>
          recordReview(other, { user_id: student, time_zone: ZONE }, { card_id: card, grade: 4, reviewedAt: now }, now),
        );
        // The review's card read waits for the student's lock: its snapshot is from before this exam.
        for (;;) {
          await sql`select pg_stat_clear_snapshot()`.execute(trx); // a transaction keeps its first view of the activity
          const waiting = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
            where wait_event_type = 'Lock' and datname = current_database()`.execute(trx);
          if (waiting.rows[0]!.n > 0) break;
          await new Promise((resolve) => setImmediate(resolve));
        }
        await insertExam(trx, { user_id: student, subject: 'Anatomy', exam_date: '2099-01-01' }, now);
      });
    await review;
    assert.equal(await versions(), 1, 'the exam that came meanwhile: readiness moved with the review');
  });

  it('writes a review alone only on the card as it was read: nothing when another write moved it between', async () => {
    const student = await newStudent({ timeZone: ZONE });
    const card = (await newCard(student, await newDeck(student), at('2026-03-01T00:00:00Z'))).id;
    const question = questionOf(at('2026-03-02T10:00:00Z'));
    const logged = async () =>
      (await db().selectFrom('flashcard_reviews').select('id').where('card_id', '=', card).execute()).length;
    const read = await readCardForReview(db(), student, card, question);
    assert.ok(read);
    assert.equal(read.facts, undefined, 'readiness does not follow her: no facts read');
    const first = await writeGradedReviewAlone(
      db(),
      gradedReviewWrite(student, card, at('2026-03-02T10:00:00Z'), ZONE),
      {
        version: read.version,
        fromDate: question.fromDate,
        factsVersion: undefined,
      },
    );
    assert.ok('written' in first);
    // A second review computed from the same read: the card moved since, so it writes nothing at all.
    const stale = await writeGradedReviewAlone(
      db(),
      gradedReviewWrite(student, card, at('2026-03-02T10:00:01Z'), ZONE),
      {
        version: read.version,
        fromDate: question.fromDate,
        factsVersion: undefined,
      },
    );
    assert.deepEqual(stale, { moved: true });
    assert.equal(await logged(), 1);
    const again = await readCardForReview(db(), student, card, question);
    assert.notEqual(again!.version, read.version);
    const second = await writeGradedReviewAlone(
      db(),
      gradedReviewWrite(student, card, at('2026-03-02T10:00:01Z'), ZONE),
      {
        version: again!.version,
        fromDate: question.fromDate,
        factsVersion: undefined,
      },
    );
    assert.ok('written' in second);
    assert.equal(await logged(), 2);
  });

  it('writes a review alone of a student readiness follows only at the version of the facts it was decided on', async () => {
    const student = await newStudent({ timeZone: ZONE });
    const deck = await newDeck(student);
    const card = (await newCard(student, deck, at('2026-03-01T00:00:00Z'))).id;
    await newCard(student, deck, at('2026-03-01T00:00:00Z'));
    const exam = await newExam(student, '2026-03-10');
    await replaceDeckLinks(db(), student, exam.id, [deck]);
    const question = questionOf(at('2026-03-02T10:00:00Z'));
    const logged = async () =>
      (await db().selectFrom('flashcard_reviews').select('id').where('card_id', '=', card).execute()).length;
    const read = await readCardForReview(db(), student, card, question);
    assert.ok(read?.facts, 'an upcoming exam: readiness follows her, and the read brings its facts');
    assert.equal(read.facts.exams.length, 1);
    assert.equal(read.facts.exams[0]!.cards.length, 2);
    // Without the facts' version, the gate does not know what the review was decided on: nothing is written.
    const blind = await writeGradedReviewAlone(
      db(),
      gradedReviewWrite(student, card, at('2026-03-02T10:00:00Z'), ZONE),
      {
        version: read.version,
        fromDate: question.fromDate,
        factsVersion: undefined,
      },
    );
    assert.deepEqual(blind, { follows: true });
    assert.equal(await logged(), 0);
    // Another write changes the facts (a task linked to the exam): the facts read before are stale, their version moved.
    const task = await newTask(student, at('2026-03-05T00:00:00Z'));
    await replaceTaskLinks(db(), student, exam.id, [task.id]);
    const stale = await writeGradedReviewAlone(
      db(),
      gradedReviewWrite(student, card, at('2026-03-02T10:00:00Z'), ZONE),
      {
        version: read.version,
        fromDate: question.fromDate,
        factsVersion: read.factsVersion,
      },
    );
    assert.deepEqual(stale, { follows: true });
    assert.equal(await logged(), 0);
    const again = await readCardForReview(db(), student, card, question);
    assert.deepEqual(again!.facts!.exams[0]!.tasks, [{ task_id: task.id, completed: false }]);
    const written = await writeGradedReviewAlone(
      db(),
      gradedReviewWrite(student, card, at('2026-03-02T10:00:00Z'), ZONE),
      {
        version: again!.version,
        fromDate: question.fromDate,
        factsVersion: again!.factsVersion,
      },
    );
    assert.ok('written' in written);
    assert.equal(await logged(), 1);
    // The exam removed: readiness no longer follows her, and facts that show it are refused all the same (a review
    // decided on them might record a move for it).
    const before = await readCardForReview(db(), student, card, question);
    assert.ok(before?.facts);
    await db().deleteFrom('exams').where('id', '=', exam.id).execute();
    const gone = await writeGradedReviewAlone(
      db(),
      gradedReviewWrite(student, card, at('2026-03-02T10:00:01Z'), ZONE),
      {
        version: before.version,
        fromDate: question.fromDate,
        factsVersion: before.factsVersion,
      },
    );
    assert.ok(!('written' in gone), JSON.stringify(gone));
    assert.equal(await logged(), 1);
  });

  describe('a review written alone that waited for the student (PostgreSQL)', () => {
    before(function () {
      if (!process.env.DATABASE_URL) this.skip(); // one connection embedded: nothing runs while a review waits
    });

    /** Runs `meanwhile` in a transaction holding the student's lock, once `review` (started then) waits for it. */
    async function whileWaiting<T>(student: string, review: () => Promise<T>, meanwhile: (trx: Db) => unknown) {
      let pending: Promise<T> | undefined;
      await db()
        .transaction()
        .execute(async (trx) => {
          await lockStudent(trx, student);
          pending = review();
          for (;;) {
            await sql`select pg_stat_clear_snapshot()`.execute(trx);
            const waiting = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
              where wait_event_type = 'Lock' and datname = current_database()`.execute(trx);
            if (waiting.rows[0]!.n > 0) break;
            await new Promise((resolve) => setImmediate(resolve));
          }
          await meanwhile(trx);
        });
      return pending!;
    }

    it('keeps the daily cap with the xp the writer it waited for awarded (the gate reads it after the lock)', async () => {
      const student = await newStudent({ timeZone: ZONE });
      const card = (await newCard(student, await newDeck(student), at('2026-03-01T00:00:00Z'))).id;
      const reviewedAt = at('2026-03-02T10:00:00Z');
      const day = localDate(reviewedAt, ZONE);
      const other = connect({ databaseUrl: testDatabase().url! });
      after(() => other.destroy());
      const read = await readCardForReview(db(), student, card, questionOf(reviewedAt));
      const write = {
        ...gradedReviewWrite(student, card, reviewedAt, ZONE),
        xp: { ...gradedReviewWrite(student, card, reviewedAt, ZONE).xp, amount: 10 },
      };
      // The review's statement starts (its snapshot) before this award commits, and then waits for the student.
      const outcome = await whileWaiting(
        student,
        () =>
          writeGradedReviewAlone(other, write, {
            version: read!.version,
            fromDate: questionOf(reviewedAt).fromDate,
            factsVersion: undefined,
          }),
        (trx) =>
          trx
            .insertInto('xp_awards')
            .values({
              user_id: student,
              award_key: 'earlier',
              source: 'review',
              amount: 95,
              local_date: day,
              awarded_at: reviewedAt,
            })
            .execute(),
      );
      assert.ok('written' in outcome);
      const awards = await db()
        .selectFrom('xp_awards')
        .select(['award_key', 'amount'])
        .where('user_id', '=', student)
        .orderBy('award_key')
        .execute();
      assert.deepEqual(awards, [
        { award_key: 'earlier', amount: 95 },
        { award_key: write.xp.key, amount: 5 },
      ]);
    });

    it('decides a review of a student readiness follows on the facts as the writer it waited for left them', async () => {
      const student = await newStudent({ timeZone: ZONE });
      const deck = await newDeck(student);
      const card = (await newCard(student, deck, at('2026-03-01T00:00:00Z'))).id;
      const exam = await newExam(student, '2099-01-01');
      await replaceDeckLinks(db(), student, exam.id, [deck]);
      const task = await newTask(student, at('2099-01-01T00:00:00Z'));
      await replaceTaskLinks(db(), student, exam.id, [task.id]);
      const other = connect({ databaseUrl: testDatabase().url! });
      after(() => other.destroy());
      const reviewNow = () => {
        const now = new Date();
        return recordReview(
          other,
          { user_id: student, time_zone: ZONE },
          { card_id: card, grade: 4, reviewedAt: undefined },
          now,
        );
      };
      await reviewNow(); // readiness's first move: the exam's state is pushed
      const pushedState = async () =>
        (
          await db()
            .selectFrom('exam_readiness')
            .select('state')
            .where('exam_id', '=', exam.id)
            .executeTakeFirstOrThrow()
        ).state as { readiness: { details: { tasks_completed: number } } };
      assert.equal((await pushedState()).readiness.details.tasks_completed, 0);
      // The second review reads the facts (the task open), finds that it moves nothing, and waits for the student while
      // a writer completes the task without moving readiness itself: the gate must see the facts changed.
      await whileWaiting(student, reviewNow, (trx) =>
        trx
          .updateTable('tasks')
          .set({ status: 'completed', completed_at: new Date() })
          .where('id', '=', task.id)
          .execute(),
      );
      assert.equal(
        (await pushedState()).readiness.details.tasks_completed,
        1,
        'the review compared readiness with the task completed',
      );
      const logged = await db().selectFrom('flashcard_reviews').select('id').where('card_id', '=', card).execute();
      assert.equal(logged.length, 2, 'each review once');
    });

    it('compares readiness in full when an exam came meanwhile: the review runs in a transaction', async () => {
      const student = await newStudent({ timeZone: ZONE });
      const card = (await newCard(student, await newDeck(student), at('2026-03-01T00:00:00Z'))).id;
      const now = new Date();
      const other = connect({ databaseUrl: testDatabase().url! });
      after(() => other.destroy());
      await whileWaiting(
        student,
        () =>
          recordReview(other, { user_id: student, time_zone: ZONE }, { card_id: card, grade: 4, reviewedAt: now }, now),
        (trx) => insertExam(trx, { user_id: student, subject: 'Anatomy', exam_date: '2099-01-01' }, now),
      );
      const versions = await db()
        .selectFrom('readiness_versions')
        .select('version')
        .where('user_id', '=', student)
        .execute();
      assert.equal(versions.length, 1, 'the exam that came meanwhile: readiness moved with the review');
      const logged = await db().selectFrom('flashcard_reviews').select('id').where('card_id', '=', card).execute();
      assert.equal(logged.length, 1, 'the review once');
    });
  });
});
