// The study rooms' bounds, documented in docs/limits.md and the spec: few enough that a room's member list and a
// student's room list are one small read each, and that a focus session's finish credits a bounded number of students.
// Each bound has one check here, used by every path by which a student gains what it counts.
import type { Db } from '../../db/connect.ts';
import { countJoinedRooms, countMembers, countOwnedRooms } from '../../db/queries/rooms.ts';

/** Rooms one student owns at most (409 room_limit_reached). */
export const MAX_ROOMS_OWNED = 10;
/** Rooms one student is a member of at most, their own included (409 room_join_limit_reached). */
export const MAX_ROOMS_JOINED = 30;
/** Members one room has at most, its owner included (409 room_full). */
export const MAX_ROOM_MEMBERS = 30;

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
