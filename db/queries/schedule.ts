// What the week view reads: a student's tasks, exams and cards due in a time range (a country's holidays: holidays.ts).
// The week view's four reads are named prepared statements (db/prepared-statements.ts): parsed and planned once per
// connection instead of on every view.
import { sql } from 'kysely';
import type { Db } from '../connect.ts';
import { executePrepared } from '../prepared-statements.ts';
import { TASK_COLUMNS } from './tasks.ts';

export async function tasksDueBetween(db: Db, userId: string, from: Date, to: Date) {
  return executePrepared(
    db,
    db
      .selectFrom('tasks')
      .select(TASK_COLUMNS)
      .where('user_id', '=', userId)
      .where('due_at', '>=', from)
      .where('due_at', '<', to)
      .orderBy('due_at')
      .orderBy('id'),
  );
}

/**
 * The heads of a student's open recurring series: occurrences that are open, carry a rule and have no successor yet.
 * The occurrences after a head do not exist yet (closing it creates the next), so the week view projects them from it.
 */
function openSeriesHeadRows(db: Db, userId: string) {
  return db
    .selectFrom('tasks as t')
    .where('t.user_id', '=', userId)
    .where('t.status', '=', 'open')
    .where('t.recurrence', 'is not', null)
    .where((eb) => eb.not(eb.exists(eb.selectFrom('tasks as s').select('s.id').whereRef('s.previous_id', '=', 't.id'))));
}

/** The first `limit` heads due before `to`, earliest first: the series a week ending at `to` may project. */
export async function openSeriesHeads(db: Db, userId: string, to: Date, limit: number) {
  return executePrepared(
    db,
    openSeriesHeadRows(db, userId)
      .select(['t.series_id', 't.title', 't.course', 't.priority', 't.recurrence', 't.due_at', 't.series_starts_at', 't.updated_at'])
      .where('t.due_at', '<', to)
      .$narrowType<{ series_id: string; recurrence: string; series_starts_at: Date }>()
      .orderBy('t.due_at')
      .orderBy('t.id')
      .limit(limit),
  );
}

/** How many open recurring series the student has: the per-account bound counts these. */
export async function countOpenSeries(db: Db, userId: string): Promise<number> {
  const row = await openSeriesHeadRows(db, userId).select((eb) => eb.fn.countAll<string | number>().as('count')).executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function examsBetween(db: Db, userId: string, firstDate: string, lastDate: string) {
  return executePrepared(
    db,
    db
      .selectFrom('exams')
      .select(['id', 'subject', 'exam_date'])
      .where('user_id', '=', userId)
      .where('exam_date', '>=', firstDate)
      .where('exam_date', '<=', lastDate)
      .orderBy('exam_date')
      .orderBy('subject')
      .orderBy('id'),
  );
}

/** Cards due before `to`, counted per deck and local due date in `timeZone` (overdue ones included). */
export async function cardsDueBefore(db: Db, userId: string, to: Date, timeZone: string) {
  const due = db
    .selectFrom('flashcard_cards as c')
    .innerJoin('flashcard_decks as d', (join) => join.onRef('d.id', '=', 'c.deck_id').onRef('d.user_id', '=', 'c.user_id'))
    .select(['c.deck_id', 'd.title', sql<string>`(c.next_due_at at time zone ${timeZone})::date`.as('on_date')])
    .where('c.user_id', '=', userId)
    .where('c.next_due_at', '<', to)
    .as('due');
  return executePrepared(
    db,
    db
      .selectFrom(due)
      .select(['deck_id', 'title', 'on_date', (eb) => eb.fn.countAll<number>().as('due_count')])
      .groupBy(['deck_id', 'title', 'on_date']),
  );
}
