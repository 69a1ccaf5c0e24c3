// A student's calendar feeds (their secret URLs' hashes), and what a feed serves: open tasks, open recurring series
// and exams. Management queries are scoped to the owner: another student's feed id finds nothing.
import type { Db } from '../connect.ts';

const LISTED_COLUMNS = [
  'id',
  'prefix',
  'name',
  'created_at',
  'last_used_at',
  'include_notes',
  'kinds',
  'course',
  'reminder_minutes',
] as const;

/** A new feed: `id` is chosen by the caller only for a record that must have a known id (the demo student's). */
export interface NewFeedRow {
  id?: string;
  user_id: string;
  name: string;
  prefix: string;
  token_hash: string;
  grant_id: string | null;
  /** The reading scopes of the creating credential that decide what the feed may show (services/calendar/feeds.ts). */
  scopes: string[];
  include_notes: boolean;
  /** What the student chose it to carry (services/calendar/feeds.ts); absent: tasks, exams and holidays. */
  kinds?: string[];
  /** Only this course's tasks and exams; absent or null: every course. */
  course?: string | null;
  /** Minutes before each task and exam that a reminder shows; absent: none. */
  reminder_minutes?: number[];
}

export async function insertCalendarFeed(db: Db, feed: NewFeedRow) {
  return db.insertInto('calendar_feeds').values(feed).returning(LISTED_COLUMNS).executeTakeFirstOrThrow();
}

/**
 * The feeds still in force: not revoked themselves, and not created through an OAuth grant that was revoked since (a
 * feed without a grant finds no row to join, so its `oauth_grants.revoked_at` reads null).
 */
function liveFeeds(db: Db) {
  return db
    .selectFrom('calendar_feeds')
    .leftJoin('oauth_grants', 'oauth_grants.id', 'calendar_feeds.grant_id')
    .where('calendar_feeds.revoked_at', 'is', null)
    .where('oauth_grants.revoked_at', 'is', null);
}

export async function listCalendarFeeds(db: Db, userId: string) {
  return liveFeeds(db)
    .select(LISTED_COLUMNS.map((column) => `calendar_feeds.${column}` as const))
    .where('calendar_feeds.user_id', '=', userId)
    .orderBy('calendar_feeds.created_at')
    .orderBy('calendar_feeds.id')
    .execute();
}

export async function countCalendarFeeds(db: Db, userId: string): Promise<number> {
  const row = await liveFeeds(db)
    .select((eb) => eb.fn.countAll<string | number>().as('count'))
    .where('calendar_feeds.user_id', '=', userId)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** False when the student has no live feed with this id. */
export async function revokeCalendarFeed(db: Db, userId: string, feedId: string, now: Date): Promise<boolean> {
  const result = await db
    .updateTable('calendar_feeds')
    .set({ revoked_at: now })
    .where('id', '=', feedId)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * The live feed whose token has this hash, with what its calendar needs of the owner and of its grant (its scopes now:
 * null for a feed made outside any grant); undefined for any other token.
 */
export async function findLiveFeed(db: Db, tokenHash: string) {
  return liveFeeds(db)
    .innerJoin('users', 'users.id', 'calendar_feeds.user_id')
    .select([
      'calendar_feeds.id',
      'calendar_feeds.user_id',
      'calendar_feeds.last_used_at',
      'calendar_feeds.scopes',
      'calendar_feeds.include_notes',
      'calendar_feeds.kinds',
      'calendar_feeds.course',
      'calendar_feeds.reminder_minutes',
      'oauth_grants.scopes as grant_scopes',
      'users.time_zone',
      'users.country_code',
    ])
    .where('calendar_feeds.token_hash', '=', tokenHash)
    .executeTakeFirst();
}

/** Records a read of the feed, at most once per `everyMs`: a poll every few minutes must not be a write every time. */
export async function touchCalendarFeed(db: Db, feedId: string, now: Date, everyMs: number): Promise<void> {
  await db
    .updateTable('calendar_feeds')
    .set({ last_used_at: now })
    .where('id', '=', feedId)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', new Date(now.getTime() - everyMs))]))
    .execute();
}

/** The student's open one-off tasks due from `from` on (of `course` only, when given), earliest first, at most `limit`. */
export async function openTasksFrom(db: Db, userId: string, from: Date, limit: number, course: string | null = null) {
  let query = db
    .selectFrom('tasks')
    .select(['id', 'title', 'course', 'notes', 'priority', 'due_at', 'updated_at'])
    .where('user_id', '=', userId)
    .where('status', '=', 'open')
    .where('recurrence', 'is', null)
    .where('due_at', '>=', from);
  if (course !== null) query = query.where('course', '=', course);
  return query.orderBy('due_at').orderBy('id').limit(limit).execute();
}

/** The student's exams on `fromDate` or later (of the subject `course` only, when given), earliest first, at most `limit`. */
export async function examsFrom(db: Db, userId: string, fromDate: string, limit: number, course: string | null = null) {
  let query = db
    .selectFrom('exams')
    .select(['id', 'subject', 'exam_date', 'notes', 'updated_at'])
    .where('user_id', '=', userId)
    .where('exam_date', '>=', fromDate);
  if (course !== null) query = query.where('subject', '=', course);
  return query.orderBy('exam_date').orderBy('id').limit(limit).execute();
}
