// Creating a calendar feed within the student's bound, and reading what a feed serves. The feed's URL is a credential
// (server/auth/calendar-feed-tokens.ts); the calendar's text is feed-calendar.ts. A feed lets anyone holding its URL
// read what it shows, so it shows only what its creator's credential could read: tasks with `tasks:read`, exams with
// `exams:read`, kept with the feed at creation and checked against its grant's scopes at every read (a grant narrowed
// later narrows the feed). Notes, the most private field, go out only on a feed the student created with them on.
// Within that, the student chooses at creation what a feed is for: some kinds only (`kinds`), one course only
// (`course`: a task's course, an exam's subject), and reminders before each task and exam (`reminders`).
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
import type { GeneralPrincipal, Scope } from '../../server/auth/principal.ts';
import type { components } from '../../generated/general/types.ts';
import type { FeedContent } from './feed-calendar.ts';

type Schemas = components['schemas'];

/** The scopes that decide what a feed shows besides the schedule's holidays (which `schedule:read` covers). */
const FEED_SCOPES = ['tasks:read', 'exams:read'] as const satisfies readonly Scope[];

/** What a feed carries unless the student chose fewer. */
const FEED_KINDS = ['tasks', 'exams', 'holidays'] as const satisfies ReadonlyArray<
  Schemas['CalendarFeedKinds'][number]
>;

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
export async function createCalendarFeed(db: Db, principal: GeneralPrincipal, request: Schemas['NewCalendarFeed']) {
  const fresh = generateFeedToken();
  const feed = await studentTransaction(db, principal.user_id, async (trx) => {
    const grant_id = principal.credential.grant_id;
    if (grant_id !== null && !(await lockLiveGrant(trx, grant_id)))
      throw new AuthenticationError('The credential was revoked.');
    if ((await countCalendarFeeds(trx, principal.user_id)) >= MAX_FEEDS_PER_STUDENT) {
      const detail = `You have ${MAX_FEEDS_PER_STUDENT} calendar feeds, the most a student may have; revoke one first.`;
      throw new LimitError('calendar_feed_limit_reached', detail, { max: MAX_FEEDS_PER_STUDENT });
    }
    return insertCalendarFeed(trx, {
      user_id: principal.user_id,
      name: request.name,
      prefix: fresh.prefix,
      token_hash: fresh.hash,
      grant_id,
      scopes: FEED_SCOPES.filter((scope) => principal.scopes.includes(scope)),
      include_notes: request.include_notes ?? false,
      kinds: [...new Set(request.kinds ?? FEED_KINDS)],
      course: request.course ?? null,
      reminder_minutes: [...new Set((request.reminders ?? []).map((reminder) => reminder.minutes_before))],
    });
  });
  return { feed, token: fresh.token };
}

/** A live feed as its read finds it (db/queries/calendar.ts findLiveFeed). */
export interface FeedToRead {
  user_id: string;
  time_zone: string;
  country_code: string | null;
  scopes: readonly string[];
  /** The scopes of the grant it was created through, now; null for a feed made outside any grant. */
  grant_scopes: readonly string[] | null;
  include_notes: boolean;
  kinds: readonly string[];
  course: string | null;
  reminder_minutes: readonly number[];
}

/**
 * What a feed shows: the kinds the student chose that its creator could read and its grant still can, of one course or
 * all, whether notes go out, and its reminders.
 */
export function feedView(feed: FeedToRead) {
  const may = (scope: (typeof FEED_SCOPES)[number]) =>
    feed.scopes.includes(scope) && (feed.grant_scopes === null || feed.grant_scopes.includes(scope));
  const chose = (kind: (typeof FEED_KINDS)[number]) => feed.kinds.includes(kind);
  return {
    tasks: chose('tasks') && may('tasks:read'),
    exams: chose('exams') && may('exams:read'),
    // Holidays belong to no course.
    holidays: chose('holidays') && feed.course === null,
    course: feed.course,
    notes: feed.include_notes,
    reminders: feed.reminder_minutes,
  };
}

export type FeedView = ReturnType<typeof feedView>;

/** What the calendar of a feed shows at `now`: see feed-calendar.ts for how it is written. */
export async function feedContent(db: Db, feed: FeedToRead, now: Date): Promise<FeedContent> {
  const view = feedView(feed);
  const from = new Date(now.getTime() - PAST_DAYS * DAY_MS);
  const today = localDate(now, feed.time_zone);
  const year = Number(today.slice(0, 4));
  const [tasks, allSeries, exams, holidays] = await Promise.all([
    view.tasks ? openTasksFrom(db, feed.user_id, from, MAX_TASKS, view.course) : [],
    view.tasks ? openSeriesHeads(db, feed.user_id, new Date(LAST_INSTANT), MAX_OPEN_SERIES) : [],
    view.exams ? examsFrom(db, feed.user_id, localDate(from, feed.time_zone), MAX_EXAMS, view.course) : [],
    // A profile's country is lower case (the spec's CountryCodeLower); the holidays are stored under ISO's upper case.
    view.holidays && feed.country_code
      ? holidaysBetween(db, feed.country_code.toUpperCase(), `${year}-01-01`, `${year + 1}-12-31`)
      : [],
  ]);
  // Open series are few (MAX_OPEN_SERIES), so one course's are picked here rather than by their query.
  const series = view.course === null ? allSeries : allSeries.filter((head) => head.course === view.course);
  const common = { timeZone: feed.time_zone, series, holidays, reminders: view.reminders };
  if (view.notes) return { ...common, tasks, exams };
  return {
    ...common,
    tasks: tasks.map((task) => ({ ...task, notes: null })),
    exams: exams.map((exam) => ({ ...exam, notes: '' })),
  };
}
