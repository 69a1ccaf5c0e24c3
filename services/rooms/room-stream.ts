// GET /api/rooms/{room_id}/stream as server-sent events: a snapshot of the room (its timer and who is present), then
// each move of the room as it is committed, whichever process made it: a member's stream opened or closed (presence)
// and the timer started, paused, resumed, stopped or finished. Moves are stored and numbered (study_room_moves), so
// a stream resumed with Last-Event-ID, on any process, sends exactly what it missed; a notification on commit is only
// the wake-up call, and one that is lost is made up for when the listener says so.
//
// Presence is the members with a room stream open: the stream takes one of its account's open-stream places (the
// same bound as every other stream) under the room's kind before it answers 200, and its opening and closing are
// moves. A process that dies leaves no `left`: the worker's sweep (sweep.ts) writes it once the stream's lease lapses.
// A running session finishes at its planned end without anyone writing: the streams that hold the room record the
// finish then, as does the worker's sweep within seconds (services/rooms/writes.ts recordFinishedSessions, once
// whichever comes first), and the `finished` move reaches every member.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Session } from 'better-sse';
import type { Db } from '../../db/connect.ts';
import type { Notifications } from '../../db/notifications.ts';
import {
  addPresence,
  findMemberRoom,
  insertMove,
  listMembers,
  lockRoom,
  moveBounds,
  movesAfter,
  presentMembers,
  ROOM_MOVES_CHANNEL,
  roomStreamKind,
  type RoomMove,
} from '../../db/queries/rooms.ts';
import { retriedTransaction } from '../../db/student-transaction.ts';
import { openSession, revocations } from '../streams/live-stream.ts';
import type { OpenStreams, StreamHolder } from '../streams/open-streams.ts';
import { followMoves, type Following, type Opening } from '../streams/follow-moves.ts';
import { STREAM_ENDINGS } from '../streams/stream-endings.ts';
import type { StreamSettings } from '../streams/stream-settings.ts';
import { memberName, roomBody } from './room-body.ts';
import { endPresence, noRoom, recordFinishedSessions } from './writes.ts';

/** A Last-Event-ID further behind than this many moves gets a fresh snapshot (`missed: true`) instead of the replay. */
export const MAX_REPLAYED_ROOM_MOVES = 100;

const ENDINGS = {
  ...STREAM_ENDINGS,
  room_left: 'You are no longer a member of this room (you left, or it was deleted). Do not reconnect.',
} as const;

type Ending = keyof typeof ENDINGS;

export interface RoomStream {
  req: IncomingMessage;
  res: ServerResponse;
  db: Db;
  notifications: Notifications;
  openStreams: OpenStreams;
  settings: StreamSettings;
  student: StreamHolder;
  roomId: string;
  /** The Last-Event-ID header, validated by the spec (digits). */
  lastEventId: string | undefined;
  now: () => Date;
  streamsEnd: AbortSignal;
  onError: (error: unknown) => void;
}

/** Resolves once the stream has ended, whoever ended it. */
export async function streamRoom(s: RoomStream): Promise<void> {
  const userId = s.student.user_id;
  if (!(await findMemberRoom(s.db, userId, s.roomId))) throw noRoom();
  const revoked = revocations();
  const place = await s.openStreams.take(s.student, roomStreamKind(s.roomId), revoked.revoke);
  let announced = false;
  try {
    await announcePresence(s, place.id);
    announced = true;
    const opening = await openingEvents(s);
    const session = await openSession(s.req, s.res, s.settings.heartbeatMs);
    if (session) await followMoves(s, session, ENDINGS, opening, revoked.endWith, followRoom(s, opening.endsAt));
  } finally {
    await place.release();
    // A failed write is made up for by the sweep, which finds the presence's lease gone.
    if (announced) await endPresence(s.db, s.roomId, place.id, s.now()).catch(s.onError);
  }
}

/** Tells the room that this member's stream opened (nothing when the room is gone or they left it). */
async function announcePresence(s: RoomStream, streamId: string): Promise<void> {
  await retriedTransaction(s.db, async (trx) => {
    if (!(await lockRoom(trx, s.roomId))) return;
    const member = (await listMembers(trx, s.roomId)).find((m) => m.user_id === s.student.user_id);
    if (!member) return;
    await addPresence(trx, { stream_id: streamId, room_id: s.roomId, user_id: member.user_id }, s.now());
    await insertMove(trx, s.roomId, 'presence', { event: 'joined', member: memberName(member) }, s.now());
  });
}

interface RoomOpening extends Opening {
  /** The instant the room's running session ends, if one runs. */
  endsAt: string | null;
}

/** A snapshot, or with a Last-Event-ID this room's stream sent at most MAX_REPLAYED_ROOM_MOVES moves ago, the moves since. */
async function openingEvents(s: RoomStream): Promise<RoomOpening> {
  const bounds = await moveBounds(s.db, s.roomId);
  const resumeFrom = s.lastEventId === undefined ? undefined : Number(s.lastEventId);
  // Move ids are numbered across all rooms, so how far behind the client is counts this room's moves since its id.
  const kept = resumeFrom !== undefined && resumeFrom <= bounds.last && resumeFrom >= bounds.first - 1;
  const moves = kept ? await movesAfter(s.db, s.roomId, resumeFrom, MAX_REPLAYED_ROOM_MOVES + 1) : [];
  if (kept && moves.length <= MAX_REPLAYED_ROOM_MOVES) {
    const send = (session: Session) => moves.forEach((move) => push(session, move));
    return { last: moves.at(-1)?.id ?? resumeFrom, endsAt: endOf(moves), send };
  }
  const at = s.now();
  await recordFinishedSessions(s.db, [s.roomId], at);
  const row = await findMemberRoom(s.db, s.student.user_id, s.roomId);
  if (!row) throw noRoom();
  const { timer } = await roomBody(s.db, s.student.user_id, row, at);
  const present = await presentMembers(s.db, s.roomId);
  const members = (await listMembers(s.db, s.roomId)).filter((m) => present.has(m.user_id)).map(memberName);
  const last = (await moveBounds(s.db, s.roomId)).last;
  const snapshot = { at: at.toISOString(), missed: resumeFrom !== undefined, timer, present: members };
  return {
    last,
    endsAt: timer?.status === 'running' ? timer.ends_at : null,
    send: (session) => session.push(snapshot, 'snapshot', String(last)),
  };
}

function push(session: Session, move: RoomMove): void {
  session.push(move.data, move.kind, String(move.id));
}

/** The running session's end after these moves: the last timer move decides (undefined: they say nothing of it). */
function endOf(moves: readonly RoomMove[]): string | null {
  const timer = moves.filter((m) => m.kind === 'timer').at(-1)?.data as
    | { timer?: { status: string; ends_at: string | null } }
    | undefined;
  return timer?.timer?.status === 'running' ? timer.timer.ends_at : null;
}

/**
 * The room's moves after the last one sent each time a commit announces some, until the student is no longer a
 * member; and the running session's finish recorded at its end.
 */
function followRoom(s: RoomStream, endsAt: string | null): (following: Following<Ending>) => () => void {
  return (following) => {
    let reading = false;
    let again = false;
    let finishTimer: NodeJS.Timeout | undefined;
    // A running session finishes at its end: record it then (once, whichever stream of the room comes first).
    const watchEnd = (endsAt: string | null) => {
      clearTimeout(finishTimer);
      if (!endsAt) return;
      finishTimer = setTimeout(
        () => void recordFinishedSessions(s.db, [s.roomId], s.now()).catch(s.onError),
        Math.max(0, Date.parse(endsAt) - s.now().getTime()) + 50,
      );
    };
    const catchUp = async () => {
      if (reading) return void (again = true);
      reading = true;
      try {
        do {
          again = false;
          if (!(await findMemberRoom(s.db, s.student.user_id, s.roomId))) return following.end('room_left');
          let moves: RoomMove[];
          do {
            moves = await movesAfter(s.db, s.roomId, following.last, MAX_REPLAYED_ROOM_MOVES);
            for (const move of moves) {
              if (following.ended) return;
              following.push(move.data, move.kind, move.id);
            }
            if (moves.some((m) => m.kind === 'timer')) watchEnd(endOf(moves));
          } while (moves.length === MAX_REPLAYED_ROOM_MOVES);
        } while (again && !following.ended);
      } catch (error) {
        s.onError(error);
        following.end('service_unavailable');
      } finally {
        reading = false;
      }
    };

    watchEnd(endsAt);
    const unsubscribe = s.notifications.subscribe(ROOM_MOVES_CHANNEL, {
      message: (roomId) => void (roomId === s.roomId && catchUp()),
      missed: () => void catchUp(),
    });
    // Moves committed between the opening read and the subscription were announced to no one here.
    void catchUp();
    return () => {
      unsubscribe();
      clearTimeout(finishTimer);
    };
  };
}
