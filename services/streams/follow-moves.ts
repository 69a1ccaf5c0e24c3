// How every live stream follows its moves once its opening events are sent: what ends it (the client leaves, the
// process stops, its time is up, its credential goes, its own source says so) and how, written once. Each kind of
// stream brings only its source of moves: a readiness group it joins, a room's notification channel it reads.
import type { ServerResponse } from 'node:http';
import type { Session } from 'better-sse';
import type { StreamEnding } from './stream-endings.ts';
import type { StreamSettings } from './stream-settings.ts';

export interface FollowedStream {
  res: ServerResponse;
  settings: StreamSettings;
  /** Aborted when the process stops: the stream ends with `service_restarting`. */
  streamsEnd: AbortSignal;
}

export interface Opening {
  /** The id of the last move the client holds once these events are sent. */
  last: number;
  send: (session: Session) => void;
}

/** What a stream's source of moves is given while the stream follows them. */
export interface Following<E extends string> {
  /** Sends one move under its id; nothing once the stream has ended (a move read before the end stays unsent). */
  push(data: unknown, event: string, id: number): void;
  /** The id of the last move sent. */
  readonly last: number;
  readonly ended: boolean;
  end(code?: E | StreamEnding): void;
}

/**
 * Sends the opening events, then what `follow` pushes, until the stream ends; the `error` event that says why carries
 * the last id sent, so a client resuming from it misses nothing. `follow` starts the source and returns its stop;
 * `started` receives the call that ends the stream with a reason. Resolves once the stream has ended.
 */
export function followMoves<E extends string = StreamEnding>(
  s: FollowedStream,
  session: Session,
  endings: Readonly<Record<E | StreamEnding, string>>,
  opening: Opening,
  started: (end: (code: E | StreamEnding) => void) => void,
  follow: (following: Following<E>) => () => void,
): Promise<void> {
  return new Promise<void>((resolve) => {
    let last = opening.last;
    let ended = false;
    let stop = () => {};

    const end = (code?: E | StreamEnding) => {
      if (ended) return;
      ended = true;
      stop();
      clearTimeout(expiry);
      s.streamsEnd.removeEventListener('abort', restarting);
      if (code && session.isConnected) session.push({ code, detail: endings[code] }, 'error', String(last));
      s.res.end();
      resolve();
    };
    const restarting = () => end('service_restarting');
    const expiry = setTimeout(() => end('max_duration_reached'), s.settings.maxDurationMs);
    s.streamsEnd.addEventListener('abort', restarting);
    s.res.once('close', () => end());

    opening.send(session);
    stop = follow({
      push(data, event, id) {
        if (ended) return;
        session.push(data, event, String(id));
        last = id;
      },
      get last() {
        return last;
      },
      get ended() {
        return ended;
      },
      end,
    });
    started(end);
    if (s.streamsEnd.aborted) restarting();
  });
}
