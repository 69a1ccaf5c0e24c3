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
  const parser = createParser({ onEvent: ({ event, id, data }) => events.push({ event: event ?? 'message', id, data }) });
  parser.feed(body);
  return events;
}
