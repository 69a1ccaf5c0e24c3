// What the week view reads: a student's tasks, exams and cards due in a time range (a country's holidays: holidays.ts),
// in one statement: the view was four round trips, each a statement of its own, and those were most of its cost.
import { sql } from 'kysely';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import type { Db } from '../connect.ts';
import { compiledOnce, executePrepared } from '../prepared-statements.ts';
import { fromInstantMs, instantMs } from './json-instants.ts';
import { TASK_COLUMNS, type TaskRow } from './tasks.ts';

/** The week asked about: its instants [from, to), its first and last dates, the student's today and time zone. */
export interface WeekRange {
  from: Date;
  to: Date;
  firstDate: string;
  lastDate: string;
  today: string;
  zone: string;
  /** At most this many open series are projected (the earliest heads). */
  seriesLimit: number;
}

/**
 * Everything the week view shows of a student: the tasks due in the week, the heads of the open series it projects,
 * the exams on its dates, and, unless the week is over, the cards due before its end counted per deck and local date.
 */
export async function findWeekFacts(db: Db, userId: string, week: WeekRange) {
  const [row] = await weekFacts(db, { userId, ...week });
  // Each row built field by field: a rest pattern and a spread per row were a visible part of the view's own CPU.
  return {
    tasks: row!.tasks.map((task): TaskRow => ({
      id: task.id,
      title: task.title,
      course: task.course,
      due_at: fromInstantMs(task.due_at_ms),
      status: task.status,
      completed_at: fromInstantMs(task.completed_at_ms),
      notes: task.notes,
      priority: task.priority,
      recurrence: task.recurrence,
      series_id: task.series_id,
      created_at: fromInstantMs(task.created_at_ms),
      updated_at: fromInstantMs(task.updated_at_ms),
    })),
    heads: row!.heads.map((head) => ({
      series_id: head.series_id,
      title: head.title,
      course: head.course,
      priority: head.priority,
      recurrence: head.recurrence,
      due_at: fromInstantMs(head.due_at_ms),
      series_starts_at: fromInstantMs(head.series_starts_at_ms),
    })),
    exams: row!.exams,
    cards: row!.cards.map((card) => ({ ...card, due_count: Number(card.due_count) })),
  };
}

const TASK_TEXT_COLUMNS = TASK_COLUMNS.filter(
  (column) => !['due_at', 'completed_at', 'created_at', 'updated_at'].includes(column),
) as Array<Exclude<(typeof TASK_COLUMNS)[number], 'due_at' | 'completed_at' | 'created_at' | 'updated_at'>>;

// Built and compiled once (db/prepared-statements.ts), and run with its generic plan, like the daily loop's statement.
const weekFacts = compiledOnce(
  ['userId', 'from', 'to', 'firstDate', 'lastDate', 'today', 'zone', 'seriesLimit'],
  (db: Db, v: WeekRange & { userId: string }) =>
    db.selectNoFrom([
      jsonArrayFrom(
        tasksDueBetween(db, v.userId, v.from, v.to).select([
          ...TASK_TEXT_COLUMNS,
          instantMs('due_at').as('due_at_ms'),
          instantMs<number | null>('completed_at').as('completed_at_ms'),
          instantMs('created_at').as('created_at_ms'),
          instantMs('updated_at').as('updated_at_ms'),
        ]),
      ).as('tasks'),
      jsonArrayFrom(
        openSeriesHeadsBefore(db, v.userId, v.to, v.seriesLimit).select([
          't.series_id',
          't.title',
          't.course',
          't.priority',
          't.recurrence',
          instantMs('t.due_at').as('due_at_ms'),
          instantMs('t.series_starts_at').as('series_starts_at_ms'),
        ]),
      )
        .$castTo<
          Array<{
            series_id: string;
            title: string;
            course: string | null;
            priority: 'low' | 'normal' | 'high';
            recurrence: string;
            due_at_ms: number;
            series_starts_at_ms: number;
          }>
        >()
        .as('heads'),
      jsonArrayFrom(examsBetween(db, v.userId, v.firstDate, v.lastDate)).as('exams'),
      // A week that is over shows no due cards (they count on today or later).
      jsonArrayFrom(
        cardsDueBefore(db, v.userId, v.to, v.zone).where(sql<boolean>`${v.today}::date <= ${v.lastDate}::date`),
      ).as('cards'),
    ]),
  { plan: 'generic' },
);

function tasksDueBetween(db: Db, userId: string, from: Date, to: Date) {
  return db
    .selectFrom('tasks')
    .where('user_id', '=', userId)
    .where('due_at', '>=', from)
    .where('due_at', '<', to)
    .orderBy('due_at')
    .orderBy('id');
}

/**
 * The heads of a student's open recurring series: occurrences that are open, carry a rule and have no successor yet.
 * The occurrences after a head do not exist yet (closing it creates the next), so the week view projects them from it.
 */
function openSeriesHeadRows(db: Db, userId: string) {
  return everyOpenSeriesHead(db).where('t.user_id', '=', userId);
}

/** The open series heads of every student (the open occurrence with a rule and no successor of each series). */
export function everyOpenSeriesHead(db: Db) {
  return db
    .selectFrom('tasks as t')
    .where('t.status', '=', 'open')
    .where('t.recurrence', 'is not', null)
    .where((eb) =>
      eb.not(eb.exists(eb.selectFrom('tasks as s').select('s.id').whereRef('s.previous_id', '=', 't.id'))),
    );
}

/** The first `limit` heads due before `to`, earliest first: the series a week ending at `to` may project. */
function openSeriesHeadsBefore(db: Db, userId: string, to: Date, limit: number) {
  return openSeriesHeadRows(db, userId).where('t.due_at', '<', to).orderBy('t.due_at').orderBy('t.id').limit(limit);
}

/** openSeriesHeadsBefore's heads with what a projection needs (the calendar feed's series). */
export async function openSeriesHeads(db: Db, userId: string, to: Date, limit: number) {
  return executePrepared(
    db,
    openSeriesHeadsBefore(db, userId, to, limit)
      .select([
        't.id',
        't.series_id',
        't.title',
        't.course',
        't.priority',
        't.recurrence',
        't.due_at',
        't.series_starts_at',
        't.updated_at',
      ])
      .$narrowType<{ series_id: string; recurrence: string; series_starts_at: Date }>(),
  );
}

/** How many open recurring series the student has: the per-account bound counts these. */
export async function countOpenSeries(db: Db, userId: string): Promise<number> {
  const row = await openSeriesHeadRows(db, userId)
    .select((eb) => eb.fn.countAll<string | number>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

function examsBetween(db: Db, userId: string, firstDate: string, lastDate: string) {
  return db
    .selectFrom('exams')
    .select(['id', 'subject', 'exam_date'])
    .where('user_id', '=', userId)
    .where('exam_date', '>=', firstDate)
    .where('exam_date', '<=', lastDate)
    .orderBy('exam_date')
    .orderBy('subject')
    .orderBy('id');
}

/** Cards due before `to`, counted per deck and local due date in `timeZone` (overdue ones included). */
function cardsDueBefore(db: Db, userId: string, to: Date, timeZone: string) {
  const due = db
    .selectFrom('flashcard_cards as c')
    .innerJoin('flashcard_decks as d', (join) =>
      join.onRef('d.id', '=', 'c.deck_id').onRef('d.user_id', '=', 'c.user_id'),
    )
    .select(['c.deck_id', 'd.title', sql<string>`(c.next_due_at at time zone ${timeZone})::date`.as('on_date')])
    .where('c.user_id', '=', userId)
    .where('c.next_due_at', '<', to)
    .as('due');
  return db
    .selectFrom(due)
    .select(['deck_id', 'title', 'on_date', (eb) => eb.fn.countAll<number>().as('due_count')])
    .groupBy(['deck_id', 'title', 'on_date']);
}
