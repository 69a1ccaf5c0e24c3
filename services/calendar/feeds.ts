// Creating a calendar feed within the student's bound, and reading what a feed serves. The feed's URL is a credential
// (server/auth/calendar-feed-tokens.ts); the calendar's text is feed-calendar.ts.
import type { Db } from '../../db/connect.ts';
import { countCalendarFeeds, examsFrom, insertCalendarFeed, openTasksFrom } from '../../db/queries/calendar.ts';
import { lockLiveGrant } from '../../db/queries/oauth.ts';
import { holidaysBetween } from '../../db/queries/holidays.ts';
import { openSeriesHeads } from '../../db/queries/schedule.ts';
import { studentTransaction } from '../../db/student-transaction.ts';
import { MAX_FEEDS_PER_STUDENT, MAX_OPEN_SERIES } from '../../domain/bounds.ts';
import { AuthenticationError, LimitError } from '../../domain/errors.ts';
import { LAST_INSTANT } from '../../domain/instants.ts';
import { localDate } from '../../domain/student-day.ts';
import { generateFeedToken } from '../../server/auth/calendar-feed-tokens.ts';
import type { GeneralPrincipal } from '../../server/auth/principal.ts';
import type { FeedContent } from './feed-calendar.ts';

/** Tasks that are this old and still open stay in the calendar; older ones are the comeback plan's business. */
const PAST_DAYS = 90;
/** What one calendar carries at most, so one feed's read stays a bounded amount of work. */
const MAX_TASKS = 500;
const MAX_EXAMS = 500;
const DAY_MS = 86_400_000;

/**
 * Creates a feed of the student's, refusing when they have MAX_FEEDS_PER_STUDENT already (409) or when the
 * credential's grant was revoked meanwhile (401). A feed created through a grant ends with it. Returns the token: the
 * only copy there will ever be.
 */
export async function createCalendarFeed(db: Db, principal: GeneralPrincipal, name: string) {
  const fresh = generateFeedToken();
  const feed = await studentTransaction(db, principal.user_id, async (trx) => {
    const grant_id = principal.credential.grant_id;
    if (grant_id !== null && !(await lockLiveGrant(trx, grant_id))) throw new AuthenticationError('The credential was revoked.');
    if ((await countCalendarFeeds(trx, principal.user_id)) >= MAX_FEEDS_PER_STUDENT) {
      const detail = `You have ${MAX_FEEDS_PER_STUDENT} calendar feeds, the most a student may have; revoke one first.`;
      throw new LimitError('calendar_feed_limit_reached', detail, { max: MAX_FEEDS_PER_STUDENT });
    }
    return insertCalendarFeed(trx, { user_id: principal.user_id, name, prefix: fresh.prefix, token_hash: fresh.hash, grant_id });
  });
  return { feed, token: fresh.token };
}

/** What the calendar of a student shows at `now`: see feed-calendar.ts for how it is written. */
export async function feedContent(db: Db, owner: { user_id: string; time_zone: string; country_code: string | null }, now: Date): Promise<FeedContent> {
  const from = new Date(now.getTime() - PAST_DAYS * DAY_MS);
  const today = localDate(now, owner.time_zone);
  const year = Number(today.slice(0, 4));
  const [tasks, series, exams, holidays] = await Promise.all([
    openTasksFrom(db, owner.user_id, from, MAX_TASKS),
    openSeriesHeads(db, owner.user_id, new Date(LAST_INSTANT), MAX_OPEN_SERIES),
    examsFrom(db, owner.user_id, localDate(from, owner.time_zone), MAX_EXAMS),
    // A profile's country is lower case (the spec's CountryCodeLower); the holidays are stored under ISO's upper case.
    owner.country_code ? holidaysBetween(db, owner.country_code.toUpperCase(), `${year}-01-01`, `${year + 1}-12-31`) : [],
  ]);
  return { timeZone: owner.time_zone, tasks, series, exams, holidays };
}
