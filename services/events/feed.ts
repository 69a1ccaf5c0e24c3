// The changes feed: a student's events from a stored cursor, in commit order, each in the envelope its webhook
// delivery carries (envelopeOf), limited to the kinds the credential may read (read-scopes.ts). Events are kept
// EVENT_RETENTION_DAYS; a cursor issued before that is refused, since events after it may have been purged. A cursor
// is not signed: its stamp is checked against what the feed could have issued at that time instead.
import type { Db } from '../../db/connect.ts';
import { deleteEventsBefore, listFeedEvents, type FeedRow } from '../../db/queries/events.ts';
import { encodeCursor, feedCursor, notACursor } from '../../server/contract/cursor.ts';
import type { GeneralPrincipal } from '../../server/auth/principal.ts';
import { requireAnyScope, requireScopes } from '../../server/auth/scopes.ts';
import { EVENT_RETENTION_DAYS } from '../../domain/bounds.ts';
import { GoneError } from '../../domain/errors.ts';
import { envelopeOf, type EventOf, type EventType } from './emit.ts';
import { readScopeOf, readScopesOf } from './read-scopes.ts';

/**
 * The purge keeps a day more than a cursor lives: an event is stamped when its transaction starts, so one committed
 * just after a cursor can be a little older than it, and must still be there when that cursor is read.
 */
const PURGE_MARGIN_DAYS = 1;
const DAY_MS = 86_400_000;
/** How far ahead of this process's clock a cursor's stamp may be: another process's clock, not a forged cursor. */
const CLOCK_SKEW_MS = 5 * 60_000;

/** The kinds the feed lists: every change; a webhook test is a ping to one endpoint, not a change. */
export const FEED_TYPES = [
  'task.created',
  'task.updated',
  'task.completed',
  'task.deleted',
  'exam.created',
  'exam.updated',
  'exam.deleted',
  'payment.succeeded',
  'user.warned',
  'room.created',
  'room.member_joined',
  'room.session_finished',
  'deck.created',
  'deck.updated',
  'deck.deleted',
  'card.created',
  'card.updated',
  'card.deleted',
] as const satisfies readonly Exclude<EventType, 'webhook.test'>[];
export type FeedType = (typeof FEED_TYPES)[number];

export interface FeedPage {
  data: EventOf<EventType>[];
  has_more: boolean;
  next_cursor: string;
}

export async function readFeed(
  db: Db,
  principal: GeneralPrincipal,
  request: { types?: readonly FeedType[]; cursor?: string; limit: number },
  now: Date,
): Promise<FeedPage> {
  const types = kindsToRead(principal, request.types);
  const after = feedCursor(request.cursor);
  if (after && after.at.getTime() < now.getTime() - EVENT_RETENTION_DAYS * DAY_MS) {
    const detail = `This cursor is older than the ${EVENT_RETENTION_DAYS} days events are kept, and events may have gone since. Reload your data, then read the feed again without a cursor.`;
    throw new GoneError('cursor_expired', detail);
  }
  if (after && after.at.getTime() > now.getTime() + CLOCK_SKEW_MS) throw notACursor();
  const { horizon, rows } = await listFeedEvents(db, principal.user_id, { types, after, limit: request.limit + 1 });
  // An event stamped a margin (the purge's) before a cursor had committed when the feed issued that cursor, so lies
  // before its place: a cursor placed before such an event was not issued at its stamp (a forged one, placed at 0 and
  // stamped now, read the whole feed as if it could not expire).
  const settled = after ? after.at.getTime() - PURGE_MARGIN_DAYS * DAY_MS : -Infinity;
  if (rows.some((row) => row.created_at.getTime() < settled)) throw notACursor();
  const has_more = rows.length > request.limit;
  const data = rows.slice(0, request.limit);
  const last = data.at(-1);
  // An empty page moves the cursor to the horizon, stamped now: nothing the client may see lies between, and a
  // client that polls a quiet feed keeps a cursor that does not expire.
  const next_cursor = last ? cursorAt(last) : horizonCursor(horizon, now);
  return { data: data.map(envelopeOf), has_more, next_cursor };
}

/** The kinds asked for (all the feed has, when none), each of which the credential must be able to read. */
function kindsToRead(principal: GeneralPrincipal, asked: readonly FeedType[] | undefined): FeedType[] {
  if (asked) {
    requireScopes(principal, readScopesOf(asked));
    return [...asked];
  }
  // A credential that may read nothing the feed holds is told which scopes would do, rather than shown an empty feed.
  requireAnyScope(principal, readScopesOf(FEED_TYPES));
  return FEED_TYPES.filter((type) => principal.scopes.includes(readScopeOf(type)));
}

/**
 * The cursor of the feed's horizon (the oldest transaction still running in a snapshot, as listFeedEvents reads it),
 * stamped now: every event before it had committed in that snapshot, every later one comes after it.
 */
export function horizonCursor(horizon: string, now: Date): string {
  return encodeCursor([now.toISOString(), horizon, 0]);
}

function cursorAt(row: FeedRow): string {
  return encodeCursor([row.created_at.toISOString(), row.txid, row.seq]);
}

/** Deletes the events past their retention, in batches; returns how many went. */
export async function purgeExpiredEvents(db: Db, now: Date, batch = 5_000): Promise<number> {
  const before = new Date(now.getTime() - (EVENT_RETENTION_DAYS + PURGE_MARGIN_DAYS) * DAY_MS);
  let total = 0;
  for (let deleted = batch; deleted === batch; total += deleted) deleted = await deleteEventsBefore(db, before, batch);
  return total;
}
