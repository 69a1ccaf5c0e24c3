// Who holds more than a per-account bound allows, for an operator's tool that takes data in whole (db
// move-to-postgres). The service checks each bound before a resource is gained, so such holders come only from data
// it did not write that way (an older version, psql, a restored copy). Each count is the one the bound's check makes,
// grouped by account.
import { sql } from 'kysely';
import type { Db } from '../connect.ts';
import { everyOpenSeriesHead } from './schedule.ts';

export interface OverBound {
  /** The account (or, for a room's members, the room) over the bound. */
  id: string;
  count: number;
}

type Counted = { id: string | null; n: string | number };
const over = (rows: Counted[]): OverBound[] => rows.map((r) => ({ id: r.id!, count: Number(r.n) }));
const n = sql<string>`count(*)`;

export async function accountsOwningRooms(db: Db, max: number): Promise<OverBound[]> {
  const rows = await db
    .selectFrom('study_rooms')
    .select(['created_by as id', n.as('n')])
    .where('created_by', 'is not', null)
    .groupBy('created_by')
    .having(n, '>', String(max))
    .orderBy('created_by')
    .execute();
  return over(rows);
}

export async function accountsInRooms(db: Db, max: number): Promise<OverBound[]> {
  const rows = await db
    .selectFrom('study_room_members')
    .select(['user_id as id', n.as('n')])
    .groupBy('user_id')
    .having(n, '>', String(max))
    .orderBy('user_id')
    .execute();
  return over(rows);
}

export async function roomsWithMembers(db: Db, max: number): Promise<OverBound[]> {
  const rows = await db
    .selectFrom('study_room_members')
    .select(['room_id as id', n.as('n')])
    .groupBy('room_id')
    .having(n, '>', String(max))
    .orderBy('room_id')
    .execute();
  return over(rows);
}

/** Live feeds, as countCalendarFeeds counts them: not revoked, and not of a grant that was revoked. */
export async function accountsWithFeeds(db: Db, max: number): Promise<OverBound[]> {
  const rows = await db
    .selectFrom('calendar_feeds')
    .leftJoin('oauth_grants', 'oauth_grants.id', 'calendar_feeds.grant_id')
    .select(['calendar_feeds.user_id as id', n.as('n')])
    .where('calendar_feeds.revoked_at', 'is', null)
    .where('oauth_grants.revoked_at', 'is', null)
    .groupBy('calendar_feeds.user_id')
    .having(n, '>', String(max))
    .orderBy('calendar_feeds.user_id')
    .execute();
  return over(rows);
}

/** A student's endpoints, as countEndpoints counts them (an app's or institution's own endpoints are no student's). */
export async function accountsWithEndpoints(db: Db, max: number): Promise<OverBound[]> {
  const rows = await db
    .selectFrom('webhook_endpoints')
    .select(['user_id as id', n.as('n')])
    .where('user_id', 'is not', null)
    .groupBy('user_id')
    .having(n, '>', String(max))
    .orderBy('user_id')
    .execute();
  return over(rows);
}

/** Open series, as countOpenSeries counts them. */
export async function accountsWithOpenSeries(db: Db, max: number): Promise<OverBound[]> {
  const rows = await everyOpenSeriesHead(db)
    .select(['t.user_id as id', n.as('n')])
    .groupBy('t.user_id')
    .having(n, '>', String(max))
    .orderBy('t.user_id')
    .execute();
  return over(rows);
}
