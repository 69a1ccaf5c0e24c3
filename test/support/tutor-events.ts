// The events of POST /api/ai/chat checked against the contract: each documented under `x-sse-events` of the 200
// response, its data valid JSON for that event's schema. Streams are parsed with eventsource-parser (the SDK's
// parser), whole (`eventsOf`) or as they arrive over the network (`readEvents`).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { createParser } from 'eventsource-parser';
import { parseEventStream, type ServerSentEvent } from './sse.ts';

const spec = JSON.parse(readFileSync(new URL('../../generated/general/openapi.json', import.meta.url), 'utf8'));
export const chatOperation = spec.paths['/api/ai/chat'].post;
const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats.default(ajv);
// The event schemas are `$ref`s to the spec's components: the whole spec is added, each event's schema compiled in
// place.
ajv.addSchema(spec, 'general');
/** The spec's schema of each event's data, compiled. */
const eventSchemas = Object.fromEntries(
  Object.keys(chatOperation.responses['200']['x-sse-events']).map((name) => [
    name,
    ajv.compile({ $ref: `general#/paths/~1api~1ai~1chat/post/responses/200/x-sse-events/${name}` }),
  ]),
);

export type TutorEvent = ServerSentEvent & { json: any };

/** One event checked: a documented name, JSON data valid for its schema, and the id that comes next (1, 2, 3…). */
function checked(event: ServerSentEvent, expectedId: number): TutorEvent {
  const validate = eventSchemas[event.event];
  assert.ok(validate, `event ${event.event} is not documented`);
  const json = JSON.parse(event.data);
  assert.ok(validate(json), `${event.event} data breaks its schema: ${ajv.errorsText(validate.errors)}`);
  assert.equal(event.id, String(expectedId));
  return { ...event, json };
}

/** A whole stream, checked event by event. */
export function eventsOf(body: string): TutorEvent[] {
  return parseEventStream(body).map((event, i) => checked(event, i + 1));
}

/** A stream read as it arrives: `next()` waits for the next event (undefined once the stream ended). */
export interface LiveEvents {
  readonly received: TutorEvent[];
  next(): Promise<TutorEvent | undefined>;
  /** Resolves once the server closed the stream. */
  readonly ended: Promise<void>;
}

export function readEvents(body: NonNullable<Response['body']>): LiveEvents {
  const received: TutorEvent[] = [];
  let read = 0;
  let done = false;
  let wake: (() => void) | undefined;
  const parser = createParser({
    onEvent: ({ event, id, data }) => {
      received.push(checked({ event: event ?? 'message', id, data }, received.length + 1));
      wake?.();
    },
  });
  const ended = (async () => {
    try {
      for await (const chunk of body.pipeThrough(new TextDecoderStream())) parser.feed(chunk);
    } catch {
      // the client aborted: the stream ends here
    } finally {
      done = true;
      wake?.();
    }
  })();
  return {
    received,
    ended,
    async next() {
      while (read >= received.length && !done) await new Promise<void>((resolve) => (wake = resolve));
      return received[read++];
    },
  };
}
