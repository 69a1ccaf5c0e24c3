// What the daily loop reads about one student: open tasks, due cards per deck, upcoming exams and study activity
// (flashcard reviews and completed tasks). What readiness needs comes from exams.ts. Every query filters on the
// user id.
import type { Db } from '../connect.ts';

export async function findStreak(db: Db, userId: string): Promise<number | undefined> {
  const row = await db.selectFrom('users').select('streak').where('id', '=', userId).executeTakeFirst();
  return row?.streak;
}

/** Open tasks due before `before` (overdue ones included), by due time. */
export async function listOpenTasksDueBefore(db: Db, userId: string, before: Date) {
  return db
    .selectFrom('tasks')
    .select(['id', 'title', 'course', 'due_at'])
    .where('user_id', '=', userId)
    .where('status', '=', 'open')
    .where('due_at', '<', before)
    .orderBy('due_at')
    .orderBy('id')
    .execute();
}

/**
 * Decks with cards due at `now`: reviewed cards due (and, of those, the ones already due before `todayStart`) and
 * new cards (never reviewed) due.
 */
export async function listDueDecks(db: Db, userId: string, now: Date, todayStart: Date) {
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
    .orderBy('d.id')
    .execute();
}

/** Whether the student has any task, deck or exam at all. */
export async function hasStudyMaterial(db: Db, userId: string): Promise<boolean> {
  const row = await db
    .selectNoFrom((eb) =>
      eb
        .or([
          eb.exists(eb.selectFrom('tasks').select('id').where('user_id', '=', userId)),
          eb.exists(eb.selectFrom('flashcard_decks').select('id').where('user_id', '=', userId)),
          eb.exists(eb.selectFrom('exams').select('id').where('user_id', '=', userId)),
        ])
        .as('has'),
    )
    .executeTakeFirstOrThrow();
  return Boolean(row.has);
}

/** Exams on or after `fromDate` ('YYYY-MM-DD'), nearest first. */
export async function listExamsFrom(db: Db, userId: string, fromDate: string) {
  return db
    .selectFrom('exams')
    .select(['id', 'subject', 'exam_date'])
    .where('user_id', '=', userId)
    .where('exam_date', '>=', fromDate)
    .orderBy('exam_date')
    .orderBy('id')
    .execute();
}

export interface StudyActivity {
  /** The latest review or task completion before `todayStart`, or null. */
  last_before_today: Date | null;
  studied_today: boolean;
}

/** Study activity (flashcard reviews and completed tasks) before and since `todayStart`. */
export async function findStudyActivity(db: Db, userId: string, todayStart: Date): Promise<StudyActivity> {
  const activity = db
    .selectFrom('flashcard_reviews')
    .select('reviewed_at as at')
    .where('user_id', '=', userId)
    .unionAll(
      db
        .selectFrom('tasks')
        .select('completed_at as at')
        .where('user_id', '=', userId)
        .where('status', '=', 'completed')
        .$narrowType<{ at: Date }>(),
    );
  const row = await db
    .selectFrom(activity.as('a'))
    .select((eb) => [
      eb.fn.max('a.at').filterWhere('a.at', '<', todayStart).as('last_before_today'),
      eb.fn.countAll<number>().filterWhere('a.at', '>=', todayStart).as('today'),
    ])
    .executeTakeFirstOrThrow();
  return { last_before_today: row.last_before_today, studied_today: row.today > 0 };
}
