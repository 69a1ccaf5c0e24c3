// The study streak: consecutive local days with a flashcard review or a completed task. It is written when a study
// day is recorded and read through one expression everywhere (profile, daily loop, partner leaderboards), so a
// lapsed streak reads as 0 without a nightly job.
import { sql } from 'kysely';
import type { Db } from '../connect.ts';
import { executePrepared } from '../prepared-statements.ts';

/**
 * The streak as of today in the user's own time zone: one whose last study day is before yesterday has lapsed.
 * Users with no recorded study day (seeded history) keep their stored streak.
 */
export const currentStreak = sql<number>`case when last_study_date is null or last_study_date >= (now() at time zone time_zone)::date - 1 then streak else 0 end`;

/**
 * Counts `today` (the student's local date) as a study day: the streak grows by one when the last study day was
 * yesterday, stays when it is today, and restarts at 1 otherwise. One statement, so concurrent activity counts the
 * day once; callers run it in the transaction that records the activity. A day before the last recorded study day (an
 * offline review synced after later study) changes nothing: the streak only counts forward, so offline days synced in
 * time order extend it as if they had been online.
 */
export async function recordStudyDay(trx: Db, userId: string, today: string, at: Date): Promise<void> {
  const moves = lastActiveMoves(at);
  await executePrepared(
    trx,
    trx
      .updateTable('users')
      .set({
        streak: sql<number>`case when last_study_date = ${today}::date then streak when last_study_date = ${today}::date - 1 then streak + 1 else 1 end`,
        last_study_date: today,
        last_active_at: sql<Date>`case when ${moves} then ${at}::timestamptz else last_active_at end`,
      })
      .where('id', '=', userId)
      .where((eb) => eb.or([eb('last_study_date', 'is', null), eb('last_study_date', '<=', today)]))
      // Another study action on the same day within the step of the last activity changes nothing: no row version.
      .where((eb) => eb.or([eb('last_study_date', 'is distinct from', today), moves])),
  );
}

/**
 * How far a study action must be past the stored last activity (users.last_active_at) to move it. The last activity
 * only decides who counts as active (the partner surface's 30-day window, its leaderboard names and /stats) and
 * appears in the account's export; a write of the student's row at every review, to move it by seconds, cost each
 * review a new version of the row and an entry in each of its six indexes (last_active_at is indexed, so the update
 * is never HOT). So it lags the latest study action by less than this, and never moves back (an offline review synced
 * after later activity leaves it).
 */
export const LAST_ACTIVE_STEP_SECONDS = 60;

/** Whether a study action at `at` moves the stored last activity (see LAST_ACTIVE_STEP_SECONDS). */
export function lastActiveMoves(at: Date) {
  return sql<boolean>`(last_active_at is null or last_active_at <= ${at}::timestamptz - ${sql.raw(`interval '${LAST_ACTIVE_STEP_SECONDS} seconds'`)})`;
}
