// Exam plans of one student, their links to decks and tasks, and the facts readiness is computed from. Every query
// is scoped to the owner; links carry user_id so the database refuses a link across students.
import { sql } from 'kysely';
import type { Db } from '../connect.ts';

const EXAM_COLUMNS = ['id', 'subject', 'exam_date', 'notes', 'created_at', 'updated_at'] as const;

export type ExamRow = NonNullable<Awaited<ReturnType<typeof findExam>>>;

export async function listExams(db: Db, userId: string, options: { limit: number; after?: { date: string; id: string } }) {
  let query = db.selectFrom('exams').select(EXAM_COLUMNS).where('user_id', '=', userId);
  if (options.after) {
    const { date, id } = options.after;
    query = query.where((eb) => eb(eb.refTuple('exam_date', 'id'), '>', eb.tuple(sql<string>`${date}::date`, id)));
  }
  return query.orderBy('exam_date').orderBy('id').limit(options.limit + 1).execute();
}

/** Exams on or after `fromDate` ('YYYY-MM-DD'), nearest first; all of them unless `limit` is given. */
export async function listUpcomingExams(db: Db, userId: string, fromDate: string, limit?: number) {
  let query = db
    .selectFrom('exams')
    .select(['id', 'subject', 'exam_date'])
    .where('user_id', '=', userId)
    .where('exam_date', '>=', fromDate)
    .orderBy('exam_date')
    .orderBy('id');
  if (limit !== undefined) query = query.limit(limit);
  return query.execute();
}

export async function findExam(db: Db, userId: string, examId: string) {
  return db.selectFrom('exams').select(EXAM_COLUMNS).where('id', '=', examId).where('user_id', '=', userId).executeTakeFirst();
}

/** The exam, locked until the transaction ends, so concurrent changes report their earlier values one after the other. */
export async function findExamForUpdate(db: Db, userId: string, examId: string) {
  return db.selectFrom('exams').select(EXAM_COLUMNS).where('id', '=', examId).where('user_id', '=', userId).forUpdate().executeTakeFirst();
}

export async function insertExam(db: Db, exam: { id?: string; user_id: string; subject: string; exam_date: string; notes?: string }, now: Date) {
  return db.insertInto('exams').values({ ...exam, created_at: now, updated_at: now }).returning(EXAM_COLUMNS).executeTakeFirstOrThrow();
}

export async function updateExam(db: Db, userId: string, examId: string, changes: Partial<{ subject: string; exam_date: string; notes: string }>, now: Date) {
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
  const rows = await db.selectFrom('flashcard_decks').select('id').where('user_id', '=', userId).where('id', 'in', deckIds).execute();
  return new Set(rows.map((row) => row.id));
}

/** Those of `taskIds` that are the student's tasks. */
export async function ownedTaskIds(db: Db, userId: string, taskIds: readonly string[]): Promise<Set<string>> {
  if (taskIds.length === 0) return new Set();
  const rows = await db.selectFrom('tasks').select('id').where('user_id', '=', userId).where('id', 'in', taskIds).execute();
  return new Set(rows.map((row) => row.id));
}

// An id sent twice in different letter case (uniqueItems compares text, PostgreSQL the uuid) is one link, not a
// primary-key violation.

/** Replaces the exam's linked decks; call in the transaction that wrote the exam. */
export async function replaceDeckLinks(trx: Db, userId: string, examId: string, deckIds: readonly string[]): Promise<void> {
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
export async function replaceTaskLinks(trx: Db, userId: string, examId: string, taskIds: readonly string[]): Promise<void> {
  await trx.deleteFrom('exam_tasks').where('exam_id', '=', examId).where('user_id', '=', userId).execute();
  if (taskIds.length > 0) {
    await trx
      .insertInto('exam_tasks')
      .values(taskIds.map((task_id) => ({ exam_id: examId, task_id, user_id: userId })))
      .onConflict((oc) => oc.doNothing())
      .execute();
  }
}

export async function deckLinks(db: Db, userId: string, examIds: readonly string[]) {
  if (examIds.length === 0) return [];
  return db
    .selectFrom('exam_decks')
    .select(['exam_id', 'deck_id'])
    .where('user_id', '=', userId)
    .where('exam_id', 'in', examIds)
    .orderBy('exam_id')
    .orderBy('deck_id')
    .execute();
}

/** The linked tasks with whether each is completed. */
export async function taskLinks(db: Db, userId: string, examIds: readonly string[]) {
  if (examIds.length === 0) return [];
  return db
    .selectFrom('exam_tasks as l')
    .innerJoin('tasks as t', 't.id', 'l.task_id')
    .select(['l.exam_id', 'l.task_id', sql<boolean>`t.status = 'completed'`.as('completed')])
    .where('l.user_id', '=', userId)
    .where('l.exam_id', 'in', examIds)
    .orderBy('l.exam_id')
    .orderBy('l.task_id')
    .execute();
}

/** The memory facts of every card of every linked deck. */
export async function linkedCards(db: Db, userId: string, examIds: readonly string[]) {
  if (examIds.length === 0) return [];
  return db
    .selectFrom('exam_decks as l')
    .innerJoin('flashcard_cards as c', 'c.deck_id', 'l.deck_id')
    .select(['l.exam_id', 'c.interval_days', 'c.last_reviewed_at'])
    .where('l.user_id', '=', userId)
    .where('l.exam_id', 'in', examIds)
    .execute();
}

/**
 * Distinct days, in `timeZone`, with a flashcard review or a completed task at or after `since` (the start of the
 * first day of the window, as an instant).
 */
export async function studyDays(db: Db, userId: string, timeZone: string, since: Date): Promise<number> {
  const reviews = db
    .selectFrom('flashcard_reviews')
    .select(sql<string>`(reviewed_at at time zone ${timeZone})::date`.as('day'))
    .where('user_id', '=', userId)
    .where('reviewed_at', '>=', since);
  const completions = db
    .selectFrom('tasks')
    .select(sql<string>`(completed_at at time zone ${timeZone})::date`.as('day'))
    .where('user_id', '=', userId)
    .where('status', '=', 'completed')
    .where('completed_at', '>=', since);
  const row = await db
    .selectFrom(reviews.union(completions).as('days'))
    .select((eb) => eb.fn.countAll<number>().as('days'))
    .executeTakeFirstOrThrow();
  return row.days;
}
