// What db move-to-postgres says of data over a per-account bound. The move takes every row as it is: an operator's
// tool must not drop a student's rooms, feeds or endpoints. It lists, per bound, who holds more than it allows, so the
// operator knows; the service then refuses those accounts any more of it until they are under the bound again
// (every check compares the count with the bound, docs/limits.md), and a room passed on goes to no one over it.
import type { Db } from '../../db/connect.ts';
import {
  accountsInRooms,
  accountsOwningRooms,
  accountsWithEndpoints,
  accountsWithFeeds,
  accountsWithOpenSeries,
  roomsWithMembers,
  type OverBound,
} from '../../db/queries/over-bounds.ts';
import {
  MAX_ENDPOINTS_PER_STUDENT,
  MAX_FEEDS_PER_STUDENT,
  MAX_OPEN_SERIES,
  MAX_ROOMS_JOINED,
  MAX_ROOMS_OWNED,
  MAX_ROOM_MEMBERS,
} from '../../domain/bounds.ts';

const BOUNDS: ReadonlyArray<{ what: string; max: number; over: (db: Db, max: number) => Promise<OverBound[]> }> = [
  { what: 'study rooms owned', max: MAX_ROOMS_OWNED, over: accountsOwningRooms },
  { what: 'study rooms joined', max: MAX_ROOMS_JOINED, over: accountsInRooms },
  { what: 'members of a study room', max: MAX_ROOM_MEMBERS, over: roomsWithMembers },
  { what: 'calendar feeds', max: MAX_FEEDS_PER_STUDENT, over: accountsWithFeeds },
  { what: 'webhook endpoints', max: MAX_ENDPOINTS_PER_STUDENT, over: accountsWithEndpoints },
  { what: 'open recurring series', max: MAX_OPEN_SERIES, over: accountsWithOpenSeries },
];

/** One line per holder over a bound (an account's id; a room's for its members), none when every bound holds. */
export async function overBoundLines(db: Db): Promise<string[]> {
  const lines: string[] = [];
  for (const bound of BOUNDS) {
    for (const holder of await bound.over(db, bound.max)) {
      lines.push(`  ${bound.what} (bound ${bound.max}): ${holder.id} holds ${holder.count}`);
    }
  }
  return lines;
}
