import { findLiveFeed, listCalendarFeeds, revokeCalendarFeed, touchCalendarFeed } from '../../db/queries/calendar.ts';
import { hashSecret } from '../../server/auth/secret-hash.ts';
import { problems } from '../../server/http/problems.ts';
import { sendBody, serialize } from '../../server/http/send-body.ts';
import { feedCalendar, REFRESH_SECONDS } from '../../services/calendar/feed-calendar.ts';
import { createCalendarFeed, feedContent, feedView } from '../../services/calendar/feeds.ts';
import { calendarText } from '../../services/calendar/rendered-calendars.ts';
import type { GeneralHandlers, Schemas } from './types.ts';

/** A feed's last_used_at moves at most this often: calendar apps poll every few minutes. */
const TOUCH_EVERY_MS = 60 * 60_000;
const CALENDAR_TYPE = 'text/calendar; charset=utf-8';

export const listMyCalendarFeeds: GeneralHandlers['listMyCalendarFeeds'] = async ({ principal }, { db }) => {
  const feeds = await listCalendarFeeds(db, principal.user_id);
  return { status: 200, body: { data: feeds.map(feedBody) } };
};

export const createMyCalendarFeed: GeneralHandlers['createMyCalendarFeed'] = async (
  { body, principal },
  { db, publicUrl },
) => {
  const { feed, token } = await createCalendarFeed(db, principal, body);
  const url = new URL(`/api/calendar/${token}.ics`, publicUrl);
  const webcal = `webcal://${url.host}${url.pathname}`;
  return {
    status: 201,
    body: { ...feedBody(feed), url: url.href, webcal_url: webcal },
    headers: { 'Cache-Control': 'no-store' },
  };
};

export const revokeMyCalendarFeed: GeneralHandlers['revokeMyCalendarFeed'] = async (
  { path, principal },
  { db, now },
) => {
  if (!(await revokeCalendarFeed(db, principal.user_id, path.feed_id, now())))
    throw problems.notFound('You have no active calendar feed with this id.');
  return { status: 204, body: undefined };
};

/**
 * The calendar behind a feed URL. The token is the credential: an unknown one, a revoked feed's, one whose grant
 * ended and one of a deleted account all get the same 404. The body is the same bytes while the data is the same, so
 * its ETag lets a polling app get 304 (server/http/send-body.ts). The text is written only when the data changed, and a
 * few times a minute at most (services/calendar/rendered-calendars.ts).
 */
export const getCalendarFeed: GeneralHandlers['getCalendarFeed'] = async (
  { path },
  { db, now, publicUrl, authFailures },
  { req, res },
) => {
  // The per-URL read limit cannot stop probing, since each guess is a new URL: an unknown token counts as a failed
  // authentication of its address, and an address over that limit is refused before any lookup.
  await authFailures.checkUrlCredential(req, res);
  // The spec's pattern admits only the shape of a feed token, so every lookup is of one.
  const feed = await findLiveFeed(db, hashSecret(path.token));
  if (!feed) {
    await authFailures.recordFailure(req, res);
    throw problems.notFound('No calendar feed has this URL.');
  }
  const at = now();
  const content = await feedContent(db, feed, at);
  const write = () => feedCalendar(content, publicUrl, at);
  const text = calendarText({ userId: feed.user_id, view: feedView(feed) }, content, write, at.getTime());
  await touchCalendarFeed(db, feed.id, at, TOUCH_EVERY_MS);
  res.setHeader('Cache-Control', `private, max-age=${REFRESH_SECONDS}`);
  res.setHeader('Content-Disposition', 'inline; filename="study-companion.ics"');
  sendBody(req, res, 200, CALENDAR_TYPE, serialize(text));
};

function feedBody(row: Awaited<ReturnType<typeof listCalendarFeeds>>[number]): Schemas['CalendarFeed'] {
  const { reminder_minutes, ...rest } = row;
  return {
    ...rest,
    kinds: row.kinds as Schemas['CalendarFeedKinds'],
    reminders: reminder_minutes.map((minutes_before) => ({ minutes_before })),
    created_at: row.created_at.toISOString(),
    last_used_at: row.last_used_at?.toISOString() ?? null,
  };
}
