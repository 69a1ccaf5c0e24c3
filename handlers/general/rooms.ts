// Study rooms: a room, its members and its join code, and the shared focus timer. What each write does (bounds,
// events, a finished session's study activity) is services/rooms/writes.ts; a room the student is not in is a 404
// everywhere, exactly as one that does not exist.
import { findMemberRoom, listMemberRooms, listMembers, presentMembers } from '../../db/queries/rooms.ts';
import { memberBody, roomBodies, roomBody } from '../../services/rooms/room-body.ts';
import { streamRoom as followRoom } from '../../services/rooms/room-stream.ts';
import {
  addRoom,
  controlTimer,
  joinByCode,
  leave,
  noRoom,
  recordFinishedSessions,
  removeRoom,
  revokeJoinCode,
  rotateJoinCode,
} from '../../services/rooms/writes.ts';
import { idempotently } from '../../server/http/idempotency.ts';
import { problems } from '../../server/http/problems.ts';
import type { GeneralHandlers } from './types.ts';

export const listMyRooms: GeneralHandlers['listMyRooms'] = async ({ principal }, { db, now }) => {
  const at = now();
  const rows = await listMemberRooms(db, principal.user_id);
  await recordFinishedSessions(
    db,
    rows.map((row) => row.id),
    at,
  );
  return { status: 200, body: { data: await roomBodies(db, principal.user_id, rows, at) } };
};

export const createRoom: GeneralHandlers['createRoom'] = async ({ headers, body, principal }, { db, now }) => {
  const at = now();
  return idempotently(
    db,
    { userId: principal.user_id, key: headers['Idempotency-Key'], operationId: 'createRoom', body, now: at },
    async (trx) => ({
      status: 201 as const,
      body: await addRoom(trx, principal.user_id, body, at),
    }),
  );
};

export const getRoom: GeneralHandlers['getRoom'] = async ({ path, principal }, { db, now }) => {
  const at = now();
  const row = await findMemberRoom(db, principal.user_id, path.room_id);
  if (!row) throw noRoom();
  await recordFinishedSessions(db, [row.id], at);
  return { status: 200, body: await roomBody(db, principal.user_id, row, at) };
};

export const deleteRoom: GeneralHandlers['deleteRoom'] = async ({ path, principal }, { db, now }) => {
  await removeRoom(db, principal.user_id, path.room_id, now());
  return { status: 204, body: undefined };
};

export const listRoomMembers: GeneralHandlers['listRoomMembers'] = async ({ path, principal }, { db }) => {
  if (!(await findMemberRoom(db, principal.user_id, path.room_id))) throw noRoom();
  const [members, present] = [await listMembers(db, path.room_id), await presentMembers(db, path.room_id)];
  return {
    status: 200,
    body: {
      data: members.map((m) => memberBody(m, present.has(m.user_id))),
    },
  };
};

export const joinRoom: GeneralHandlers['joinRoom'] = async ({ body, principal }, { db, now }) => {
  return { status: 200, body: await joinByCode(db, principal.user_id, body.code, now()) };
};

export const leaveRoom: GeneralHandlers['leaveRoom'] = async ({ path, principal }, { db, now }) => {
  await leave(db, principal.user_id, path.room_id, now());
  return { status: 204, body: undefined };
};

export const rotateRoomJoinCode: GeneralHandlers['rotateRoomJoinCode'] = async ({ path, principal }, { db, now }) => {
  const code = await rotateJoinCode(db, principal.user_id, path.room_id, now());
  return { status: 201, body: code, headers: { 'Cache-Control': 'no-store' } };
};

export const revokeRoomJoinCode: GeneralHandlers['revokeRoomJoinCode'] = async ({ path, principal }, { db, now }) => {
  await revokeJoinCode(db, principal.user_id, path.room_id, now());
  return { status: 204, body: undefined };
};

export const controlRoomTimer: GeneralHandlers['controlRoomTimer'] = async ({ path, body, principal }, { db, now }) => {
  const action =
    body.action === 'start'
      ? { action: 'start' as const, duration_minutes: body.duration_minutes ?? missingDuration() }
      : { action: body.action };
  return { status: 200, body: await controlTimer(db, principal.user_id, path.room_id, action, now()) };
};

/** The room live: its timer and who is present (services/rooms/room-stream.ts). */
export const streamRoom: GeneralHandlers['streamRoom'] = async (
  { path, headers, principal },
  { db, now, lifecycle, streams },
  { req, res },
) => {
  if (!streams) throw new Error('the general surface serves streams with its notifications');
  await followRoom({
    req,
    res,
    db,
    notifications: streams.notifications,
    openStreams: streams.open,
    settings: streams.settings,
    student: principal,
    roomId: path.room_id,
    lastEventId: headers['Last-Event-ID'],
    now,
    streamsEnd: lifecycle.streamsEnd,
    onError: (error) =>
      req.log.warn({ err: error }, 'the room stream could not read or write its moves; it ends, the client reconnects'),
  });
};

function missingDuration(): never {
  throw problems.invalidRequest([{ path: 'body.duration_minutes', message: 'is required to start a session' }]);
}
