// GET /api/exams/readiness/stream as server-sent events: a snapshot (or, with Last-Event-ID, the moves missed since),
// then each move of the student's readiness as the notification path announces it, read from the database after the
// last version sent. A notification is only a wake-up call: one that is lost (the listening connection dropped) is
// made up for when the listener says so, and the stream never sends a move twice or out of order.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createSession, type Session } from 'better-sse';
import type { Db } from '../../db/connect.ts';
import { currentReadinessVersion } from '../../db/queries/readiness.ts';
import { trackSseStream } from '../metrics.ts';
import type { Notifications } from '../../db/notifications.ts';
import { movesSince, parseMove, READINESS_CHANNEL, upcomingReadiness, type Student } from './readiness.ts';

export interface StreamSettings {
  /** Between two heartbeat comments. */
  heartbeatMs: number;
  /** A stream ends after this long (`max_duration_reached`); the client reconnects with Last-Event-ID. */
  maxDurationMs: number;
}

export const DEFAULT_STREAM_SETTINGS: StreamSettings = { heartbeatMs: 15_000, maxDurationMs: 15 * 60_000 };

/** What EventSource waits before it reconnects, sent as the stream's `retry:`. */
const RECONNECT_MS = 2_000;

const ENDINGS = {
  service_restarting: 'The service is restarting. Reconnect with Last-Event-ID; the moves made meanwhile follow.',
  max_duration_reached: 'The stream was open as long as one stream may be. Reconnect with Last-Event-ID; nothing is missed.',
  service_unavailable: 'The database did not answer. Reconnect with Last-Event-ID in a moment.',
} as const;

export interface ReadinessStream {
  req: IncomingMessage;
  res: ServerResponse;
  db: Db;
  notifications: Notifications;
  settings: StreamSettings;
  student: Student;
  /** The Last-Event-ID header, validated by the spec (digits). */
  lastEventId: string | undefined;
  now: () => Date;
  /** Aborted when the process stops: the stream ends with `service_restarting`. */
  streamsEnd: AbortSignal;
  onError: (error: unknown) => void;
}

/** Resolves once the stream has ended, whoever ended it. */
export async function streamReadiness(s: ReadinessStream): Promise<void> {
  const userId = s.student.user_id;
  // Listening starts before the first read, so no move committed after that read goes unnoticed.
  let wakeUp = () => {};
  const unsubscribe = s.notifications.subscribe(READINESS_CHANNEL, {
    message: (payload) => {
      if (parseMove(payload)?.userId === userId) wakeUp();
    },
    missed: () => wakeUp(),
  });
  try {
    // Refusals (the database down: 503) come before the 200.
    const opening = await openingEvents(s);
    const session = await createSession(s.req, s.res, { retry: RECONNECT_MS, keepAlive: s.settings.heartbeatMs });
    trackSseStream(s.res);
    if (s.req.method === 'HEAD') return void s.res.end();
    await followMoves(s, session, opening, (wake) => (wakeUp = wake));
  } finally {
    unsubscribe();
  }
}

interface Opening {
  /** The version the client holds once these events are sent. */
  version: number;
  send: (session: Session) => void;
}

/** A snapshot, or with a Last-Event-ID this server sent, the moves since it. */
async function openingEvents(s: ReadinessStream): Promise<Opening> {
  const userId = s.student.user_id;
  const current = await currentReadinessVersion(s.db, userId);
  const resumeFrom = s.lastEventId === undefined ? undefined : Number(s.lastEventId);
  if (resumeFrom !== undefined && resumeFrom <= current) {
    const moves = await movesSince(s.db, userId, resumeFrom);
    return {
      version: moves.at(-1)?.version ?? resumeFrom,
      send: (session) => moves.forEach(({ version, ...move }) => session.push(move, 'readiness', String(version))),
    };
  }
  const at = s.now();
  const exams = await upcomingReadiness(s.db, s.student, at);
  const snapshot = { at: at.toISOString(), missed: resumeFrom !== undefined, exams };
  return { version: current, send: (session) => session.push(snapshot, 'snapshot', String(current)) };
}

/**
 * Sends the opening events, then the moves after the last version sent each time it is woken up, one read at a time,
 * until the client leaves, the process stops, the stream's time is up or the database fails.
 */
function followMoves(s: ReadinessStream, session: Session, opening: Opening, onWake: (wake: () => void) => void): Promise<void> {
  const { res } = s;
  return new Promise<void>((resolve) => {
    let version = opening.version;
    let reading: Promise<void> | undefined;
    let again = false;
    let ended = false;

    const end = (code?: keyof typeof ENDINGS) => {
      if (ended) return;
      ended = true;
      clearTimeout(expiry);
      s.streamsEnd.removeEventListener('abort', restarting);
      if (code && session.isConnected) session.push({ code, detail: ENDINGS[code] }, 'error', String(version));
      res.end();
      resolve();
    };
    const restarting = () => end('service_restarting');
    const expiry = setTimeout(() => end('max_duration_reached'), s.settings.maxDurationMs);
    s.streamsEnd.addEventListener('abort', restarting);
    res.once('close', () => end());

    const catchUp = async () => {
      do {
        again = false;
        for (const { version: moved, ...move } of await movesSince(s.db, s.student.user_id, version)) {
          if (ended) return;
          session.push(move, 'readiness', String(moved));
          version = moved;
        }
      } while (again && !ended);
    };
    const wake = () => {
      if (ended) return;
      if (reading) return void (again = true);
      reading = catchUp()
        .catch((error: unknown) => {
          s.onError(error);
          end('service_unavailable');
        })
        .finally(() => (reading = undefined));
    };

    opening.send(session);
    onWake(wake);
    // Moves committed between the opening read and now were announced to nobody yet.
    wake();
    if (s.streamsEnd.aborted) restarting();
  });
}
