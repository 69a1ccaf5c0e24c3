// What every live stream of the general surface does around its own events: it opens its SSE session (counted while
// it lasts; HEAD gets the headers only), and it keeps a revocation of its place that comes before it follows its
// moves, so that it ends the stream as soon as it does.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createSession, type Session } from 'better-sse';
import { EVENT_STREAM_HEADERS } from '../../server/http/event-stream-headers.ts';
import { trackSseStream } from '../../server/process/metrics.ts';
import type { StreamRevocation } from './open-streams.ts';
import { RECONNECT_MS, REVOCATION_ENDINGS, type StreamEnding } from './stream-endings.ts';

/** The stream's SSE session, or undefined for a HEAD request (answered with the stream's headers, then ended). */
export async function openSession(
  req: IncomingMessage,
  res: ServerResponse,
  heartbeatMs: number,
): Promise<Session | undefined> {
  const session = await createSession(req, res, {
    retry: RECONNECT_MS,
    keepAlive: heartbeatMs,
    headers: EVENT_STREAM_HEADERS,
  });
  trackSseStream(res);
  if (req.method !== 'HEAD') return session;
  res.end();
  return undefined;
}

/** A stream's revocations: `revoke` is what its open-stream place calls; `endWith` is called once it follows moves. */
export function revocations() {
  let kept: StreamRevocation | undefined;
  let onRevoked = (why: StreamRevocation): void => {
    kept = why;
  };
  return {
    revoke: (why: StreamRevocation) => onRevoked(why),
    /** From now on a revocation ends the stream with its ending; one that came before ends it at once. */
    endWith(end: (ending: StreamEnding) => void) {
      onRevoked = (why) => end(REVOCATION_ENDINGS[why]);
      if (kept) onRevoked(kept);
    },
  };
}
