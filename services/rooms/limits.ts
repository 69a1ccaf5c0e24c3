// The study rooms' bounds (their numbers are in domain/bounds.ts): each has one check here, used by every path by
// which a student gains what it counts (created, joined, inherited from a leaving owner).
import type { Db } from '../../db/connect.ts';
import { countJoinedRooms, countMembers, countOwnedRooms } from '../../db/queries/rooms.ts';
import { MAX_ROOM_MEMBERS, MAX_ROOMS_JOINED, MAX_ROOMS_OWNED } from '../../domain/bounds.ts';

/**
 * Whether the student may own one more room: creating one, or inheriting one from a leaving owner. The caller holds
 * the student's lock, so two rooms gained at once cannot both see the last place.
 */
export async function mayOwnAnotherRoom(trx: Db, studentId: string): Promise<boolean> {
  return (await countOwnedRooms(trx, studentId)) < MAX_ROOMS_OWNED;
}

/** Whether the student may be in one more room: creating or joining one (the caller holds the student's lock). */
export async function mayJoinAnotherRoom(trx: Db, studentId: string): Promise<boolean> {
  return (await countJoinedRooms(trx, studentId)) < MAX_ROOMS_JOINED;
}

/** Whether the room takes one more member (the caller holds the room's lock). */
export async function roomHasPlace(trx: Db, roomId: string): Promise<boolean> {
  return (await countMembers(trx, roomId)) < MAX_ROOM_MEMBERS;
}
