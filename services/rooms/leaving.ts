// A member leaving a room, by their own request or with their account. The others are told: each of the member's
// open streams of the room ends its presence with a `left` move now, since once the membership is gone no one knows
// whose presence it was. A leaving owner's room passes to the member who joined earliest among those who may own one
// more room (MAX_ROOMS_OWNED); when none may, the room closes for everyone, as if its owner had deleted it. A room is
// never handed to someone over the bound, however many owners leave at once: the heirs are locked before the count.
import type { Db } from '../../db/connect.ts';
import {
  announceMembershipChange,
  deleteRoomRow,
  insertMove,
  listMembers,
  lockMemberRoom,
  memberRoomIds,
  otherMembers,
  removeMember,
  removePresencesOf,
  transferRoom,
  type RoomRow,
} from '../../db/queries/rooms.ts';
import { lockStudent } from '../../db/student-transaction.ts';
import { mayOwnAnotherRoom } from './limits.ts';
import { memberName } from './room-body.ts';

/** Writes the room's `left` move for one presence of `userId` (nothing once they are no longer a member). */
export async function announceLeft(trx: Db, roomId: string, userId: string, at: Date): Promise<void> {
  const member = (await listMembers(trx, roomId)).find((m) => m.user_id === userId);
  if (!member) return;
  await insertMove(trx, roomId, 'presence', { event: 'left', member: memberName(member) }, at);
}

/** The student leaves `room`, which the caller locked (and which the student is a member of). */
export async function leaveLockedRoom(trx: Db, room: RoomRow, studentId: string, at: Date): Promise<void> {
  const presences = await removePresencesOf(trx, room.id, studentId);
  for (let i = 0; i < presences; i++) await announceLeft(trx, room.id, studentId, at);
  if (room.created_by === studentId) await passOn(trx, room.id, studentId);
  await removeMember(trx, room.id, studentId);
  await announceMembershipChange(trx, room.id);
}

/** Every room the account is in is left (its deletion follows), locking them in id order. */
export async function leaveEveryRoom(trx: Db, studentId: string, at: Date): Promise<void> {
  for (const roomId of await memberRoomIds(trx, studentId)) {
    const room = await lockMemberRoom(trx, studentId, roomId);
    if (room) await leaveLockedRoom(trx, room, studentId, at);
  }
}

/**
 * The owner leaves: the room passes to the earliest member who may own another, or is deleted. Every possible heir is
 * locked, in id order as every room write locks students, before any count is read.
 */
async function passOn(trx: Db, roomId: string, owner: string): Promise<void> {
  const others = await otherMembers(trx, roomId, owner);
  for (const id of [...others].sort()) await lockStudent(trx, id);
  for (const heir of others) {
    if (await mayOwnAnotherRoom(trx, heir)) return transferRoom(trx, roomId, heir);
  }
  await deleteRoomRow(trx, roomId);
}
