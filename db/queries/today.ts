// What the daily loop reads about one student: due cards per deck, whether there is any material, and study activity
// (flashcard reviews and completed tasks). Open tasks come from tasks.ts; upcoming exams and what readiness needs
// from exams.ts. Every query filters on the user id.
import type { Db } from '../connect.ts';
import { currentStreak } from './streak.ts';

export async function findStreak(db: Db, userId: string): Promise<number | undefined> {
  const row = await db.selectFrom('users').select(currentStreak.as('streak')).where('id', '=', userId).executeTakeFirst();
  return row?.streak;
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

export interface StudyActivity {
  /** The latest review or task completion before `todayStart`, or null. */
  last_before_today: Date | null;
  studied_today: boolean;
}

/**
 * Study activity (flashcard reviews and completed tasks) before and since `todayStart`. Each part is its own
 * subquery so that the reviews are read through their (user_id, reviewed_at) index, not scanned in full.
 */
export async function findStudyActivity(db: Db, userId: string, todayStart: Date): Promise<StudyActivity> {
  const reviews = db.selectFrom('flashcard_reviews').where('user_id', '=', userId);
  const completions = db.selectFrom('tasks').where('user_id', '=', userId).where('status', '=', 'completed');
  const row = await db
    .selectNoFrom((eb) => [
      reviews.select((r) => r.fn.max('reviewed_at').as('at')).where('reviewed_at', '<', todayStart).as('last_review'),
      completions.select((t) => t.fn.max('completed_at').as('at')).where('completed_at', '<', todayStart).as('last_completion'),
      eb
        .or([
          eb.exists(reviews.select('id').where('reviewed_at', '>=', todayStart)),
          eb.exists(completions.select('id').where('completed_at', '>=', todayStart)),
        ])
        .as('studied_today'),
    ])
    .executeTakeFirstOrThrow();
  const last = [row.last_review, row.last_completion].filter((at): at is Date => at instanceof Date);
  return {
    last_before_today: last.length > 0 ? new Date(Math.max(...last.map((at) => at.getTime()))) : null,
    studied_today: Boolean(row.studied_today),
  };
}
