// A study room's writes with what follows from each, in one transaction: the bounds, the events, and a focus
// session's finish counted as the members' study activity. A write to an existing room locks the room first, then
// any student it credits or counts, in id order; a student's own writes elsewhere never take a room's lock, so no two
// transactions wait on each other in a cycle.
import type { Db } from '../../db/connect.ts';
import {
  addMember,
  announceMembershipChange,
  deleteRoomRow,
  findMemberRoom,
  insertRoom,
  insertMove,
  insertSession,
  latestSessions,
  listMembers,
  lockMemberRoom,
  lockRoom,
  lockRoomByCode,
  removePresence,
  setJoinCode,
  updateSession,
  type RoomRow,
} from '../../db/queries/rooms.ts';
import { lockStudent, retriedTransaction } from '../../db/student-transaction.ts';
import { focusState, plannedEnd, timerStep, type TimerAction } from '../../domain/focus-timer.ts';
import { localDate } from '../../domain/student-day.ts';
import { focusClaim } from '../../domain/xp.ts';
import type { components } from '../../generated/general/types.ts';
import { generateJoinCode } from '../../server/auth/room-join-codes.ts';
import { hashSecret } from '../../server/auth/secret-hash.ts';
import { ConflictError, LimitError, NotAllowedError, NotFoundError } from '../../domain/errors.ts';
import { emitEvent } from '../events/emit.ts';
import { progress } from '../progress/progress.ts';
import { MAX_ROOM_MEMBERS, MAX_ROOMS_JOINED, MAX_ROOMS_OWNED } from '../../domain/bounds.ts';
import { announceLeft, leaveLockedRoom } from './leaving.ts';
import { mayJoinAnotherRoom, mayOwnAnotherRoom, roomHasPlace } from './limits.ts';
import { memberBody, roomBody, timerBody, type Room, type RoomTimer } from './room-body.ts';

/** What each action is called on the room's stream. */
const TIMER_EVENTS = { start: 'started', pause: 'paused', resume: 'resumed', stop: 'stopped' } as const;

export const noRoom = () => new NotFoundError('You are in no room with this id.');
const joinedTooMany = () => {
  const detail = `You are in ${MAX_ROOMS_JOINED} rooms, the most a student may; leave one first.`;
  return new LimitError('room_join_limit_reached', detail, { max: MAX_ROOMS_JOINED });
};

/** Creates a room owned by the student, in the caller's transaction (which holds the student's lock). */
export async function addRoom(
  trx: Db,
  studentId: string,
  room: components['schemas']['NewRoom'],
  at: Date,
): Promise<Room> {
  if (!(await mayOwnAnotherRoom(trx, studentId))) {
    const detail = `You own ${MAX_ROOMS_OWNED} rooms, the most a student may; delete one first.`;
    throw new LimitError('room_limit_reached', detail, { max: MAX_ROOMS_OWNED });
  }
  if (!(await mayJoinAnotherRoom(trx, studentId))) throw joinedTooMany();
  const row = await insertRoom(trx, { name: room.title, course: room.course ?? null, created_by: studentId }, at);
  const body = await roomBody(trx, studentId, row, at);
  await emitEvent(trx, { type: 'room.created', studentId, data: { object: body }, at });
  return body;
}

/**
 * Runs `work` on a room the student is a member of, with the room locked; a room the student is not in is a 404.
 * A session of the room that ran out meanwhile is recorded first, so `work` sees the timer as it is.
 */
async function inMemberRoom<T>(
  db: Db,
  studentId: string,
  roomId: string,
  at: Date,
  work: (trx: Db, room: RoomRow) => Promise<T>,
): Promise<T> {
  return retriedTransaction(db, async (trx) => {
    const room = await lockMemberRoom(trx, studentId, roomId);
    if (!room) throw noRoom();
    await recordFinishedSession(trx, roomId, at);
    return work(trx, room);
  });
}

function ownerOnly(room: RoomRow, studentId: string, what: string): void {
  if (room.created_by !== studentId) throw new NotAllowedError('room_owner_only', `Only the room's owner may ${what}.`);
}

/** Joins the room whose current code this is; joining a room twice changes nothing. */
export async function joinByCode(db: Db, studentId: string, code: string, at: Date): Promise<Room> {
  return retriedTransaction(db, async (trx) => {
    const target = await lockRoomByCode(trx, hashSecret(code));
    if (!target) throw new NotFoundError('No room has this join code; it may have been rotated or revoked.');
    const already = await findMemberRoom(trx, studentId, target.id);
    if (already) return roomBody(trx, studentId, already, at);
    if (!(await roomHasPlace(trx, target.id))) {
      const detail = `This room has ${MAX_ROOM_MEMBERS} members, the most a room may have.`;
      throw new LimitError('room_full', detail, { max: MAX_ROOM_MEMBERS });
    }
    await lockStudent(trx, studentId);
    if (!(await mayJoinAnotherRoom(trx, studentId))) throw joinedTooMany();
    await addMember(trx, target.id, studentId, at);
    await recordFinishedSession(trx, target.id, at);
    const room = (await findMemberRoom(trx, studentId, target.id))!;
    const member = (await listMembers(trx, target.id)).find((m) => m.user_id === studentId)!;
    const joiner = memberBody(member, false);
    const joined = await roomBody(trx, studentId, room, at);
    await emitEvent(trx, { type: 'room.member_joined', studentId, data: { object: joined, member: joiner }, at });
    if (room.created_by && room.created_by !== studentId) {
      await emitEvent(trx, {
        type: 'room.member_joined',
        studentId: room.created_by,
        data: { object: await roomBody(trx, room.created_by, room, at), member: joiner },
        at,
      });
    }
    return joined;
  });
}

/** Leaves a room; its owner leaving passes it on or closes it (leaving.ts). */
export async function leave(db: Db, studentId: string, roomId: string, at: Date): Promise<void> {
  await inMemberRoom(db, studentId, roomId, at, (trx, room) => leaveLockedRoom(trx, room, studentId, at));
}

export async function removeRoom(db: Db, studentId: string, roomId: string, at: Date): Promise<void> {
  await inMemberRoom(db, studentId, roomId, at, async (trx, room) => {
    ownerOnly(room, studentId, 'delete it; leave it instead');
    await deleteRoomRow(trx, roomId);
    await announceMembershipChange(trx, roomId);
  });
}

/** A new join code for the room (the previous one stops working); the code is returned this once. */
export async function rotateJoinCode(db: Db, studentId: string, roomId: string, at: Date) {
  return inMemberRoom(db, studentId, roomId, at, async (trx, room) => {
    ownerOnly(room, studentId, 'change its join code');
    const fresh = generateJoinCode();
    await setJoinCode(trx, roomId, fresh, at);
    return { code: fresh.code, prefix: fresh.prefix, created_at: at.toISOString() };
  });
}

export async function revokeJoinCode(db: Db, studentId: string, roomId: string, at: Date): Promise<void> {
  await inMemberRoom(db, studentId, roomId, at, async (trx, room) => {
    ownerOnly(room, studentId, 'change its join code');
    await setJoinCode(trx, roomId, null, at);
  });
}

/** Starts, pauses, resumes or stops the room's timer for every member; 409 when its state does not allow the action. */
export async function controlTimer(
  db: Db,
  studentId: string,
  roomId: string,
  action: TimerAction,
  at: Date,
): Promise<RoomTimer> {
  return inMemberRoom(db, studentId, roomId, at, async (trx) => {
    const current = (await latestSessions(trx, [roomId])).get(roomId);
    const step = timerStep(current, action, at);
    if ('refused' in step) throw new ConflictError('room_timer_conflict', step.refused);
    const session =
      'start' in step
        ? await insertSession(trx, {
            room_id: roomId,
            started_by: studentId,
            duration_ms: step.start.duration_ms,
            started_at: at,
          })
        : await updateSession(trx, current!.id, step.change);
    const timer = timerBody(session, at);
    await insertMove(trx, roomId, 'timer', { event: TIMER_EVENTS[action.action], timer }, at);
    return timer;
  });
}

/**
 * Records the finish of the room's session when it ran its whole duration and the finish is not recorded yet, in the
 * caller's transaction (which holds the room's lock): each member who was in the room when it started and still is
 * gets the study day (streak) and the session's xp within the daily cap, and a room.session_finished event. The
 * study day is the one the session ended on, in each member's zone.
 */
export async function recordFinishedSession(trx: Db, roomId: string, now: Date): Promise<void> {
  const session = (await latestSessions(trx, [roomId])).get(roomId);
  if (!session || session.finished_at || focusState(session, now).status !== 'finished') return;
  const end = plannedEnd(session);
  const finished = await updateSession(trx, session.id, { finished_at: end });
  const body = timerBody(finished, now);
  await insertMove(trx, roomId, 'timer', { event: 'finished', timer: body }, now);
  const members = (await listMembers(trx, roomId))
    .filter((m) => m.joined_at.getTime() <= session.started_at.getTime())
    .sort((a, b) => (a.user_id < b.user_id ? -1 : 1));
  for (const member of members) {
    await lockStudent(trx, member.user_id);
    const day = localDate(end, member.time_zone);
    await progress(trx, member, now, {
      studied: { day, claim: focusClaim(session.id, session.duration_ms, day) },
      event: (xp) => ({
        type: 'room.session_finished',
        studentId: member.user_id,
        data: { object: body, xp_awarded: xp },
        at: now,
      }),
    });
  }
}

/** Records the finish of any session of these rooms that ran out (for reads, which otherwise write nothing). */
export async function recordFinishedSessions(db: Db, roomIds: readonly string[], now: Date): Promise<void> {
  const sessions = await latestSessions(db, roomIds);
  const due = [...sessions.values()]
    .filter((s) => !s.finished_at && focusState(s, now).status === 'finished')
    .map((s) => s.room_id)
    .sort();
  for (const roomId of due) {
    await retriedTransaction(db, async (trx) => {
      if (await lockRoom(trx, roomId)) await recordFinishedSession(trx, roomId, now);
    });
  }
}

/**
 * Tells the room that a member's stream closed, once: whoever ends the presence (the stream, or the worker's sweep
 * once the stream's lease lapsed) writes the `left` move; nothing when the room is gone or the student left it.
 */
export async function endPresence(db: Db, roomId: string, streamId: string, at: Date): Promise<void> {
  await retriedTransaction(db, async (trx) => {
    if (!(await lockRoom(trx, roomId))) return;
    const userId = await removePresence(trx, streamId);
    if (userId) await announceLeft(trx, roomId, userId, at);
  });
}
