// What the daily loop reads about one student, in one statement: the streak, open tasks due by the end of today, due
// cards per deck, whether there is any material, study activity (flashcard reviews and completed tasks) and the
// upcoming exams with what readiness needs (exams.ts). Every part filters on the user id. One statement instead of
// ten: the loop was ten round trips, each parsed and planned on its own, and most of its cost.
import type { Db } from '../connect.ts';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import { studyDays, upcomingPreparation, type StudyWindow } from './exams.ts';
import { compiledOnce } from '../prepared-statements.ts';
import { fromInstantMs, instantMs } from './json-instants.ts';
import { currentStreak } from './streak.ts';
import { COMPLETED, openTasks } from './tasks.ts';

/**
 * Decks with cards due at `now`: reviewed cards due (and, of those, the ones already due before `todayStart`) and
 * new cards (never reviewed) due.
 */
export async function listDueDecks(db: Db, userId: string, now: Date, todayStart: Date) {
  return dueDecks(db, userId, now, todayStart).execute();
}

function dueDecks(db: Db, userId: string, now: Date, todayStart: Date) {
  return db
    .selectFrom('flashcard_cards as c')
    .innerJoin('flashcard_decks as d', 'd.id', 'c.deck_id')
    .where('c.user_id', '=', userId)
    .where('d.user_id', '=', userId)
    .where('c.next_due_at', '<=', now)
    .groupBy(['d.id', 'd.title'])
    .select((eb) => [
      'd.id',
      'd.title',
      eb.fn.countAll<number>().filterWhere('c.last_reviewed_at', 'is not', null).as('due_reviews'),
      eb.fn
        .countAll<number>()
        .filterWhere((f) => f.and([f('c.last_reviewed_at', 'is not', null), f('c.next_due_at', '<', todayStart)]))
        .as('overdue_reviews'),
      eb.fn.countAll<number>().filterWhere('c.last_reviewed_at', 'is', null).as('due_new'),
    ])
    .orderBy('d.id');
}

export interface LoopDay {
  now: Date;
  /** The student's local date ('YYYY-MM-DD') and its start and end as instants. */
  today: string;
  start: Date;
  end: Date;
}

/**
 * Everything the loop plans from, or undefined when the account no longer exists. The activity parts are subqueries
 * of their own, so that reviews are read through their (user_id, reviewed_at) index and completed tasks through
 * tasks_user_completed_idx, not scanned in full.
 */
export async function findDailyLoopFacts(db: Db, userId: string, day: LoopDay, window: StudyWindow) {
  const [row] = await dailyLoopFacts(db, {
    userId,
    now: day.now,
    today: day.today,
    start: day.start,
    end: day.end,
    zone: window.zone,
    since: window.since,
  });
  if (!row || row.streak === null) return undefined;
  const last = [row.last_review, row.last_completion].filter((at): at is Date => at instanceof Date);
  return {
    streak: row.streak,
    tasks: row.tasks.map(({ due_at_ms, ...task }) => ({ ...task, due_at: fromInstantMs(due_at_ms) })),
    decks: row.decks,
    has_material: Boolean(row.has_material),
    last_before_today: last.length > 0 ? new Date(Math.max(...last.map((at) => at.getTime()))) : null,
    studied_today: Boolean(row.studied_today),
    exams: row.exams,
    study_days: row.study_days,
  };
}

interface LoopValues {
  userId: string;
  now: Date;
  today: string;
  start: Date;
  end: Date;
  zone: string;
  since: Date;
}

// Built and compiled once (db/prepared-statements.ts): Kysely's building and compiling of this statement cost more of
// the loop's CPU than PostgreSQL's running of it. Its generic plan always: planning its ~25 relations for each run's
// values, which PostgreSQL does when statistics show a large account among few students, cost more than running it
// (docs/performance.md, "The loop and the week planned on every request").
const dailyLoopFacts = compiledOnce(
  ['userId', 'now', 'today', 'start', 'end', 'zone', 'since'],
  (db: Db, v: LoopValues) => {
    const reviews = db.selectFrom('flashcard_reviews').where('user_id', '=', v.userId);
    const completions = db.selectFrom('tasks').where('user_id', '=', v.userId).where('status', '=', COMPLETED);
    return db.selectNoFrom((eb) => [
      db.selectFrom('users').select(currentStreak.as('streak')).where('id', '=', v.userId).as('streak'),
      jsonArrayFrom(
        openTasks(db, v.userId, { dueBefore: v.end }).select([
          'id',
          'title',
          'course',
          instantMs('due_at').as('due_at_ms'),
        ]),
      ).as('tasks'),
      jsonArrayFrom(dueDecks(db, v.userId, v.now, v.start)).as('decks'),
      eb
        .or([
          eb.exists(db.selectFrom('tasks').select('id').where('user_id', '=', v.userId)),
          eb.exists(db.selectFrom('flashcard_decks').select('id').where('user_id', '=', v.userId)),
          eb.exists(db.selectFrom('exams').select('id').where('user_id', '=', v.userId)),
        ])
        .as('has_material'),
      reviews
        .select((r) => r.fn.max('reviewed_at').as('at'))
        .where('reviewed_at', '<', v.start)
        .as('last_review'),
      completions
        .select((t) => t.fn.max('completed_at').as('at'))
        .where('completed_at', '<', v.start)
        .as('last_completion'),
      // The latest review and completion against today's start, not `exists (… >= start)`: a max is one probe of the
      // index whatever the statistics say, where an EXISTS may be planned as a scan of the table when one student owns
      // most of it (a single-student embedded installation, the bench).
      eb
        .or([
          eb(
            reviews.select((r) => r.fn.max('reviewed_at').as('at')),
            '>=',
            v.start,
          ),
          eb(
            completions.select((t) => t.fn.max('completed_at').as('at')),
            '>=',
            v.start,
          ),
        ])
        .as('studied_today'),
      upcomingPreparation(db, v.userId, v.today).as('exams'),
      studyDays(db, v.userId, { zone: v.zone, since: v.since }).as('study_days'),
    ]);
  },
  { plan: 'generic' },
);
