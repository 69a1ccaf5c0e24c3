// Server-sent events for the SDK: the streaming operations (the AI tutor chat, `POST /api/ai/chat`) answer
// text/event-stream; `sseEvents` turns such a fetch Response into an async iterator of parsed events.
import { EventSourceParserStream } from 'eventsource-parser/stream';
import type { EventSourceMessage } from 'eventsource-parser';
import type { Middleware } from 'openapi-fetch';

export type { EventSourceMessage };

/** Thrown when a streaming operation answers with something other than an event stream (a problem, usually). */
export class StreamRefusedError extends Error {
  constructor(
    readonly status: number,
    /** The response body: the problem+json document when the service refused the request. */
    readonly body: unknown,
  ) {
    const detail = (body as { detail?: unknown } | null)?.detail;
    super(`expected an event stream, got ${status}${typeof detail === 'string' ? `: ${detail}` : ''}`);
  }
}

/**
 * openapi-fetch reads the body of every refused response (into `error`), even with `parseAs: 'stream'`, so the
 * Response it hands back can no longer be read. The SDK's clients keep an unread copy of each refused stream's
 * response here, for `sseEvents` to read the problem from.
 */
const refusedBodies = new WeakMap<Response, Response>();

/** The clients' middleware that keeps that copy (only for `parseAs: 'stream'`, so other calls pay nothing). */
export const keepRefusedStreamBodies: Middleware = {
  onResponse({ response, options }) {
    if (options.parseAs === 'stream' && !response.ok) refusedBodies.set(response, response.clone());
    return undefined;
  },
};

/**
 * The events of a text/event-stream response, in order, as they arrive; ends when the server closes the stream. With
 * the SDK's clients, ask for the raw stream: `const { response } = await client.POST(path, { body, parseAs: 'stream'
 * })`. Stop early with `break`: the underlying stream is cancelled.
 */
export async function* sseEvents(response: Response): AsyncGenerator<EventSourceMessage> {
  const type = response.headers.get('content-type') ?? '';
  if (!response.ok || !type.startsWith('text/event-stream') || !response.body) {
    const unread = response.bodyUsed ? refusedBodies.get(response) : response;
    const text = unread ? await unread.text() : '';
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    throw new StreamRefusedError(response.status, body);
  }
  const reader = response.body
    .pipeThrough(new TextDecoderStream())
    .pipeThrough(new EventSourceParserStream())
    .getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
