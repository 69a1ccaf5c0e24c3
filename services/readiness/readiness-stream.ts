// GET /api/exams/readiness/stream as server-sent events: a snapshot (or, with a recent Last-Event-ID, the moves missed
// since), then each move of the student's readiness as the notification path announces it, read from the database
// after the last version sent. A notification is only a wake-up call: one that is lost (the listening connection
// dropped) is made up for when the listener says so, and the stream never sends a move twice or out of order.
//
// Fair share: the stream takes one of its account's open-stream places before it answers 200 (open-streams.ts), and
// the streams of one student in this process read each move once, together (readiness-groups.ts). A stream ends when
// its account is deleted or its credential revoked, in whichever process that happens.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Db } from '../../db/connect.ts';
import { currentReadinessVersion } from '../../db/queries/readiness.ts';
import { openSession, revocations } from '../streams/live-stream.ts';
import type { OpenStreams, StreamHolder } from '../streams/open-streams.ts';
import type { ReadinessGroups } from './readiness-groups.ts';
import { movesSince, upcomingReadiness } from './readiness.ts';
import type { StreamSettings } from '../streams/stream-settings.ts';
import { followMoves, type Following, type Opening } from '../streams/follow-moves.ts';
import { STREAM_ENDINGS, type StreamEnding } from '../streams/stream-endings.ts';
import type { Student } from '../../server/auth/principal.ts';

/**
 * A Last-Event-ID further behind than this many moves gets a fresh snapshot (`missed: true`) instead of the replay:
 * the snapshot costs one bounded statement (at most STREAMED_EXAMS exams), a replay from an old id grows with every
 * exam the student ever had. A day of steady study is well under a hundred moves.
 */
export const MAX_REPLAYED_MOVES = 100;

export interface ReadinessStream {
  req: IncomingMessage;
  res: ServerResponse;
  db: Db;
  /** This process's readiness streams by student, which read each move once for all of one student's streams. */
  groups: ReadinessGroups;
  /** The account's open-stream places, and the end of the stream when its credential goes. */
  openStreams: OpenStreams;
  settings: StreamSettings;
  /** The student, and the credential the stream was opened with. */
  student: Student & StreamHolder;
  /** The Last-Event-ID header, validated by the spec (digits). */
  lastEventId: string | undefined;
  now: () => Date;
  /** Aborted when the process stops: the stream ends with `service_restarting`. */
  streamsEnd: AbortSignal;
  onError: (error: unknown) => void;
}

/** Resolves once the stream has ended, whoever ended it. */
export async function streamReadiness(s: ReadinessStream): Promise<void> {
  const revoked = revocations();
  // Refusals (too many streams: 429; the database down: 503) come before the 200.
  const place = await s.openStreams.take(s.student, 'readiness', revoked.revoke);
  try {
    const opening = await openingEvents(s);
    const session = await openSession(s.req, s.res, s.settings.heartbeatMs);
    if (session) await followMoves(s, session, STREAM_ENDINGS, opening, revoked.endWith, followGroup(s));
  } finally {
    await place.release();
  }
}

/** A snapshot, or with a Last-Event-ID this server sent at most MAX_REPLAYED_MOVES moves ago, the moves since it. */
async function openingEvents(s: ReadinessStream): Promise<Opening> {
  const userId = s.student.user_id;
  const current = await currentReadinessVersion(s.db, userId);
  const resumeFrom = s.lastEventId === undefined ? undefined : Number(s.lastEventId);
  if (resumeFrom !== undefined && resumeFrom <= current && current - resumeFrom <= MAX_REPLAYED_MOVES) {
    const moves = await movesSince(s.db, userId, resumeFrom);
    return {
      last: moves.at(-1)?.version ?? resumeFrom,
      send: (session) => moves.forEach(({ version, ...move }) => session.push(move, 'readiness', String(version))),
    };
  }
  const at = s.now();
  const exams = await upcomingReadiness(s.db, s.student, at);
  const snapshot = { at: at.toISOString(), missed: resumeFrom !== undefined, exams };
  return { last: current, send: (session) => session.push(snapshot, 'snapshot', String(current)) };
}

/** In the student's group, the moves after the last version sent each time the group reads them. */
function followGroup(s: ReadinessStream): (following: Following<StreamEnding>) => () => void {
  return (following) =>
    s.groups.join(s.student.user_id, {
      get version() {
        return following.last;
      },
      deliver(moves) {
        for (const { version, ...move } of moves) following.push(move, 'readiness', version);
      },
      fail(error) {
        s.onError(error);
        following.end('service_unavailable');
      },
    });
}
