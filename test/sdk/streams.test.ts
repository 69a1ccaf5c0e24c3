// The SDK's streaming pattern exactly as docs/sdk.md documents it, against the real service over HTTP with the
// global fetch: `client.POST/GET(path, { …, parseAs: 'stream' })`, then `sseEvents(response)`. A refused stream
// must throw StreamRefusedError carrying the problem (openapi-fetch has already read the refused response's body,
// which once made this throw `Body is unusable`), and an accepted one must yield the documented events.
import assert from 'node:assert/strict';
import { localTutor } from '../../services/ai/tutor/local.ts';
import { createGeneralClient, sseEvents, StreamRefusedError, type GeneralSchema } from '../../sdk/index.ts';
import { newStudent } from '../support/general-app.ts';
import { listeningApp, OUTLASTING_KEEP_ALIVE } from '../support/listening.ts';

/** The problem a refused stream throws; fails when it throws anything else, or yields an event. */
async function refusal(response: Response): Promise<StreamRefusedError> {
  try {
    for await (const event of sseEvents(response)) assert.fail(`no event expected, got ${event.event}`);
  } catch (error) {
    assert.ok(error instanceof StreamRefusedError, `expected StreamRefusedError, got ${String(error)}`);
    return error;
  }
  return assert.fail('the refused stream did not throw');
}

describe('SDK: streams through the documented calls', () => {
  let service: Awaited<ReturnType<typeof listeningApp>>;

  before(async () => {
    service = await listeningApp({ tutor: localTutor({ pauseMs: 0 }) }, OUTLASTING_KEEP_ALIVE);
  });
  after(() => service?.close());

  it('streamTutorChat refused (an empty message): StreamRefusedError with the 400 problem', async () => {
    const student = await newStudent(service.app);
    const client = createGeneralClient({ baseUrl: service.baseUrl, accessToken: student.token });
    const { response, error } = await client.POST('/api/ai/chat', { body: { message: '' }, parseAs: 'stream' });
    assert.equal(error?.code, 'invalid_request', 'openapi-fetch read the problem');
    const refused = await refusal(response);
    assert.equal(refused.status, 400);
    assert.equal((refused.body as GeneralSchema<'Problem'>).code, 'invalid_request');
    assert.match(refused.message, /^expected an event stream, got 400: /);
  });

  it('streamTutorChat accepted: message.started, deltas that make the reply, message.completed, typed by the spec', async () => {
    const student = await newStudent(service.app);
    const client = createGeneralClient({ baseUrl: service.baseUrl, accessToken: student.token });
    const { response } = await client.POST('/api/ai/chat', {
      body: { message: 'What should I revise first?' },
      parseAs: 'stream',
    });
    const names: Array<string | undefined> = [];
    let started: GeneralSchema<'TutorMessageStarted'> | undefined;
    let completed: GeneralSchema<'TutorMessageCompleted'> | undefined;
    let reply = '';
    for await (const event of sseEvents(response)) {
      names.push(event.event);
      if (event.event === 'message.started') started = JSON.parse(event.data);
      if (event.event === 'message.delta') reply += (JSON.parse(event.data) as GeneralSchema<'TutorMessageDelta'>).text;
      if (event.event === 'message.completed') completed = JSON.parse(event.data);
    }
    assert.equal(names[0], 'message.started');
    assert.equal(names.at(-1), 'message.completed');
    assert.ok(reply.length > 0, 'the reply arrives in pieces');
    assert.equal(completed?.message_id, started?.message_id);
    const stored = await client.GET('/api/ai/conversations/{conversation_id}', {
      params: { path: { conversation_id: started!.conversation_id } },
    });
    assert.equal(stored.data?.messages.data.at(-1)?.content, reply);
  });

  it('streamExamReadiness refused (no credential): StreamRefusedError with the 401 problem', async () => {
    const anonymous = createGeneralClient({ baseUrl: service.baseUrl });
    const { response } = await anonymous.GET('/api/exams/readiness/stream', { parseAs: 'stream' });
    const refused = await refusal(response);
    assert.equal(refused.status, 401);
    assert.equal((refused.body as GeneralSchema<'Problem'>).code, 'unauthorized');
  });

  it('streamExamReadiness accepted: the first event is a snapshot, and breaking out closes the stream', async () => {
    const student = await newStudent(service.app);
    const client = createGeneralClient({ baseUrl: service.baseUrl, accessToken: student.token });
    const { response } = await client.GET('/api/exams/readiness/stream', { parseAs: 'stream' });
    for await (const event of sseEvents(response)) {
      assert.equal(event.event, 'snapshot');
      const snapshot: GeneralSchema<'ReadinessSnapshot'> = JSON.parse(event.data);
      assert.equal(snapshot.missed, false);
      assert.deepEqual(snapshot.exams, []);
      break;
    }
  });
});
