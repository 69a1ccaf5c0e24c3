// Exam plans of one student, their links to decks and tasks, and the facts readiness is computed from. Every query
// is scoped to the owner; links carry user_id so the database refuses a link across students.
import { sql, type ExpressionBuilder, type RawBuilder } from 'kysely';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import type { Db } from '../connect.ts';
import { executePrepared } from '../prepared-statements.ts';
import type { Database } from '../schema.ts';
import { instantMs } from './json-instants.ts';
import { COMPLETED } from './tasks.ts';

export const EXAM_COLUMNS = ['id', 'subject', 'exam_date', 'notes', 'created_at', 'updated_at'] as const;

export type ExamRow = NonNullable<Awaited<ReturnType<typeof findExam>>>;

export async function listExams(
  db: Db,
  userId: string,
  options: { limit: number; after?: { date: string; id: string } },
) {
  let query = db.selectFrom('exams').select(EXAM_COLUMNS).where('user_id', '=', userId);
  if (options.after) {
    const { date, id } = options.after;
    query = query.where((eb) => eb(eb.refTuple('exam_date', 'id'), '>', eb.tuple(sql<string>`${date}::date`, id)));
  }
  return query
    .orderBy('exam_date')
    .orderBy('id')
    .limit(options.limit + 1)
    .execute();
}

/** Exams on or after `fromDate` ('YYYY-MM-DD'), nearest first; all of them unless `limit` is given. */
export async function listUpcomingExams(db: Db, userId: string, fromDate: string, limit?: number) {
  return upcomingExams(db, userId, fromDate, limit).select(['id', 'subject', 'exam_date']).execute();
}

/** The query of listUpcomingExams without its columns, to select what a caller needs or to embed in one statement. */
function upcomingExams(db: Db, userId: string, fromDate: string, limit?: number) {
  let query = db
    .selectFrom('exams')
    .where('user_id', '=', userId)
    .where('exam_date', '>=', fromDate)
    .orderBy('exam_date')
    .orderBy('id');
  if (limit !== undefined) query = query.limit(limit);
  return query;
}

export async function findExam(db: Db, userId: string, examId: string) {
  return db
    .selectFrom('exams')
    .select(EXAM_COLUMNS)
    .where('id', '=', examId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

/** The exam, locked until the transaction ends, so concurrent changes report their earlier values one after the other. */
export async function findExamForUpdate(db: Db, userId: string, examId: string) {
  return db
    .selectFrom('exams')
    .select(EXAM_COLUMNS)
    .where('id', '=', examId)
    .where('user_id', '=', userId)
    .forUpdate()
    .executeTakeFirst();
}

export async function insertExam(
  db: Db,
  exam: { id?: string; user_id: string; subject: string; exam_date: string; notes?: string },
  now: Date,
) {
  return db
    .insertInto('exams')
    .values({ ...exam, created_at: now, updated_at: now })
    .returning(EXAM_COLUMNS)
    .executeTakeFirstOrThrow();
}

export async function updateExam(
  db: Db,
  userId: string,
  examId: string,
  changes: Partial<{ subject: string; exam_date: string; notes: string }>,
  now: Date,
) {
  return db
    .updateTable('exams')
    .set({ ...changes, updated_at: now })
    .where('id', '=', examId)
    .where('user_id', '=', userId)
    .returning(EXAM_COLUMNS)
    .executeTakeFirst();
}

export async function deleteExam(db: Db, userId: string, examId: string): Promise<void> {
  await db.deleteFrom('exams').where('id', '=', examId).where('user_id', '=', userId).execute();
}

/** Those of `deckIds` that are the student's decks. */
export async function ownedDeckIds(db: Db, userId: string, deckIds: readonly string[]): Promise<Set<string>> {
  if (deckIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('flashcard_decks')
    .select('id')
    .where('user_id', '=', userId)
    .where('id', 'in', deckIds)
    .execute();
  return new Set(rows.map((row) => row.id));
}

/** Those of `taskIds` that are the student's tasks. */
export async function ownedTaskIds(db: Db, userId: string, taskIds: readonly string[]): Promise<Set<string>> {
  if (taskIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('tasks')
    .select('id')
    .where('user_id', '=', userId)
    .where('id', 'in', taskIds)
    .execute();
  return new Set(rows.map((row) => row.id));
}

// An id sent twice in different letter case (uniqueItems compares text, PostgreSQL the uuid) is one link, not a
// primary-key violation.

/** Replaces the exam's linked decks; call in the transaction that wrote the exam. */
export async function replaceDeckLinks(
  trx: Db,
  userId: string,
  examId: string,
  deckIds: readonly string[],
): Promise<void> {
  await trx.deleteFrom('exam_decks').where('exam_id', '=', examId).where('user_id', '=', userId).execute();
  if (deckIds.length > 0) {
    await trx
      .insertInto('exam_decks')
      .values(deckIds.map((deck_id) => ({ exam_id: examId, deck_id, user_id: userId })))
      .onConflict((oc) => oc.doNothing())
      .execute();
  }
}

/** Replaces the exam's linked tasks; call in the transaction that wrote the exam. */
export async function replaceTaskLinks(
  trx: Db,
  userId: string,
  examId: string,
  taskIds: readonly string[],
): Promise<void> {
  await trx.deleteFrom('exam_tasks').where('exam_id', '=', examId).where('user_id', '=', userId).execute();
  if (taskIds.length > 0) {
    await trx
      .insertInto('exam_tasks')
      .values(taskIds.map((task_id) => ({ exam_id: examId, task_id, user_id: userId })))
      .onConflict((oc) => oc.doNothing())
      .execute();
  }
}

/** The window readiness counts study days in: days in `zone`, from the start of the day `since` falls on. */
export interface StudyWindow {
  zone: string;
  since: Date;
}

/**
 * What readiness is computed from, per exam, as correlated subqueries of a query on `exams`: the linked decks' ids,
 * the linked tasks with whether each is completed, and the memory facts of every card of the linked decks. JSON has
 * no timestamps, so a card's last review comes as epoch milliseconds (instantMs).
 */
function preparationFacts(userId: string) {
  return (eb: ExpressionBuilder<Database, 'exams'>) => [
    jsonArrayFrom(
      eb
        .selectFrom('exam_decks as l')
        .select('l.deck_id')
        .where('l.user_id', '=', userId)
        .whereRef('l.exam_id', '=', 'exams.id')
        .orderBy('l.deck_id'),
    ).as('decks'),
    jsonArrayFrom(
      eb
        .selectFrom('exam_tasks as l')
        .innerJoin('tasks as t', 't.id', 'l.task_id')
        .select(['l.task_id', sql<boolean>`t.status = 'completed'`.as('completed')])
        .where('l.user_id', '=', userId)
        .whereRef('l.exam_id', '=', 'exams.id')
        .orderBy('l.task_id'),
    ).as('tasks'),
    jsonArrayFrom(
      eb
        .selectFrom('exam_decks as l')
        .innerJoin('flashcard_cards as c', 'c.deck_id', 'l.deck_id')
        .select(['c.interval_days', instantMs<number | null>('c.last_reviewed_at').as('last_reviewed_ms')])
        .where('l.user_id', '=', userId)
        .whereRef('l.exam_id', '=', 'exams.id'),
    ).as('cards'),
  ];
}

/** Those of `examIds` that are the student's, each with what prepares it, and the study days of the window: one statement. */
export async function findExamPreparation(db: Db, userId: string, examIds: readonly string[], window: StudyWindow) {
  const exams = db
    .selectFrom('exams')
    .select('id')
    .select(preparationFacts(userId))
    .where('user_id', '=', userId)
    .where('id', 'in', examIds);
  return db
    .selectNoFrom([jsonArrayFrom(exams).as('exams'), studyDays(db, userId, window).as('study_days')])
    .executeTakeFirstOrThrow();
}

/**
 * The exams on or after `fromDate`, nearest first (at most `limit`), each with what prepares it: to embed, with
 * studyDays, in a statement that reads readiness (findUpcomingPreparation, the daily loop's).
 */
export function upcomingPreparation(db: Db, userId: string, fromDate: string, limit?: number) {
  return jsonArrayFrom(
    upcomingExams(db, userId, fromDate, limit).select(['id', 'subject', 'exam_date']).select(preparationFacts(userId)),
  );
}

/** The upcoming exams with what prepares each, and the study days of the window: one statement. */
export async function findUpcomingPreparation(
  db: Db,
  userId: string,
  fromDate: string,
  window: StudyWindow,
  limit?: number,
) {
  // Named (db/prepared-statements.ts): every write that may move readiness runs it, and its parse and plan cost more
  // than its execution.
  const [row] = await executePrepared(
    db,
    db.selectNoFrom([
      upcomingPreparation(db, userId, fromDate, limit).as('exams'),
      studyDays(db, userId, window).as('study_days'),
    ]),
  );
  return row!;
}

/**
 * The number of distinct days, in the window's zone, with a flashcard review or a completed task at or after its
 * start: a scalar subquery, to embed. Reviews are many (every review of every card), so their days are found by
 * skipping through the (user_id, reviewed_at) index from one local day to the next: one probe per day with a review
 * (at most the window's days), where reading every review of the window converted each one's time to its zone.
 */
export function studyDays(db: Db, userId: string, window: StudyWindow) {
  const { zone, since } = window;
  const firstReview = (from: RawBuilder<Date>) =>
    db
      .selectFrom('flashcard_reviews')
      .select((eb) => eb.fn.min('reviewed_at').as('at'))
      .where('user_id', '=', userId)
      .where('reviewed_at', '>=', from);
  // The first instant of the local day after `at`'s (a midnight that a clock change skips is read as the hour after).
  const nextDay = sql<Date>`(((review_days.at at time zone ${zone}::text)::date + 1)::timestamp at time zone ${zone}::text)`;
  const completions = db
    .selectFrom('tasks')
    .select(sql<string>`(completed_at at time zone ${zone})::date`.as('day'))
    .where('user_id', '=', userId)
    .where('status', '=', COMPLETED)
    .where('completed_at', '>=', since);
  // A count always has its one row: the subquery is never null.
  return sql<number>`(with recursive review_days(at) as (
    select (${firstReview(sql<Date>`${since}::timestamptz`)})
    union all
    select (${firstReview(nextDay)}) from review_days where at is not null
  )
  select count(*) from (select (at at time zone ${zone}::text)::date as day from review_days where at is not null union ${completions}) as days)`;
}
