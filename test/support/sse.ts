// Reads a whole text/event-stream body (supertest buffers it) with the parser the SDK's `sseEvents` uses
// (eventsource-parser), so the tests and the SDK cannot disagree on the format.
// As in a browser, an event without its closing blank line at the end of the body is dropped.
import { createParser } from 'eventsource-parser';

export interface ServerSentEvent {
  /** The `event:` field; `message` when the event has none, as EventSource reports it. */
  event: string;
  id: string | undefined;
  data: string;
}

export function parseEventStream(body: string): ServerSentEvent[] {
  const events: ServerSentEvent[] = [];
  const parser = createParser({
    onEvent: ({ event, id, data }) => events.push({ event: event ?? 'message', id, data }),
  });
  parser.feed(body);
  return events;
}

/** A stream read as it arrives, for streams that do not end by themselves. */
export interface LiveEventStream {
  status: number;
  headers: Headers;
  /**
   * The next event; rejects when none comes within `withinMs` or the stream ends first. The default is a deadline for
   * an event that must come (a loaded machine may take seconds); a test that expects none gives its own, short one.
   */
  next(withinMs?: number): Promise<ServerSentEvent>;
  /** Comment lines (heartbeats) received so far. */
  readonly comments: number;
  /** The `retry:` the stream set, if any. */
  readonly retry: number | undefined;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  /** Disconnects, as a client that goes away. */
  close(): void;
}

export async function openEventStream(url: string, headers: Record<string, string>): Promise<LiveEventStream> {
  const abort = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
  const queue: ServerSentEvent[] = [];
  const waiting: Array<() => void> = [];
  let comments = 0;
  let retry: number | undefined;
  let done = false;
  const wakeAll = () => waiting.splice(0).forEach((wake) => wake());
  const parser = createParser({
    onEvent: ({ event, id, data }) => (queue.push({ event: event ?? 'message', id, data }), wakeAll()),
    onComment: () => void comments++,
    onRetry: (ms) => void (retry = ms),
  });
  const ended = (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>)
        parser.feed(decoder.decode(chunk, { stream: true }));
    } catch {
      // closed by the client
    } finally {
      done = true;
      wakeAll();
    }
  })();
  return {
    status: res.status,
    headers: res.headers,
    get comments() {
      return comments;
    },
    get retry() {
      return retry;
    },
    ended,
    close: () => abort.abort(),
    async next(withinMs = 30_000) {
      const deadline = Date.now() + withinMs;
      while (queue.length === 0) {
        if (done) throw new Error('the stream ended without another event');
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no event within ${withinMs} ms`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiting.push(() => (clearTimeout(timer), resolve()));
        });
      }
      return queue.shift()!;
    },
  };
}
