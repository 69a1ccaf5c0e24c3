// The AI queue seen from clients: with AI_MAX_CONCURRENCY=1, real streams over the network, read as they arrive by
// eventsource-parser. The tutor holds each reply until the test lets it finish, so who holds the slot is certain.
import assert from 'node:assert/strict';
import { setContractPlan } from '../../db/queries/users.ts';
import type { Tutor } from '../../handlers/general/tutor/types.ts';
import { createAiQueue } from '../../server/ai-queue.ts';
import { createLifecycle, type Lifecycle } from '../../server/lifecycle.ts';
import { contractClient } from '../support/contract.ts';
import { newStudent, type Student } from '../support/general-app.ts';
import { listen, type Listening } from '../support/listening.ts';
import { buildApp } from '../support/partner-app.ts';
import { testDatabase } from '../support/root-hooks.ts';
import { readEvents, type LiveEvents, type TutorEvent } from '../support/tutor-events.ts';

/** A tutor that answers each message once the test calls `finish(message)` (or the reply is aborted). */
function heldTutor() {
  const gates = new Map<string, { promise: Promise<void>; resolve: () => void }>();
  const gate = (message: string) => {
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    return gates.get(message) ?? gates.set(message, { promise, resolve }).get(message)!;
  };
  const tutor: Tutor = {
    model: 'held-tutor',
    async *reply({ message, signal }) {
      const { promise, resolve } = gate(message);
      signal.addEventListener('abort', () => resolve(), { once: true });
      await promise;
      if (signal.aborted) return;
      yield { type: 'delta', text: `About ${message}.` };
      yield { type: 'finish', finish_reason: 'stop', usage: { input_tokens: null, output_tokens: null } };
    },
  };
  return { tutor, finish: (message: string) => gate(message).resolve() };
}

interface Chat {
  events: LiveEvents;
  abort(): void;
}

async function queueApp(limits: { maxQueue: number }, lifecycle?: Lifecycle) {
  const { tutor, finish } = heldTutor();
  const queue = createAiQueue({ maxConcurrency: 1, ...limits });
  const app = await buildApp({ tutor, aiQueue: queue, ...(lifecycle ? { lifecycle } : {}) });
  const server = await listen(app);
  const chat = async (student: Student, message: string): Promise<Chat> => {
    const client = new AbortController();
    const response = await fetch(`${server.baseUrl}/api/ai/chat`, {
      method: 'POST',
      headers: { ...student.headers, 'content-type': 'application/json' },
      body: JSON.stringify({ message }),
      signal: client.signal,
    });
    assert.equal(response.status, 200, await (response.status === 200 ? '' : response.text()));
    return { events: readEvents(response.body!), abort: () => client.abort() };
  };
  return { app, api: contractClient(app), queue, server, finish, chat, newStudent: () => newStudent(app) };
}

async function next(chat: Chat): Promise<Pick<TutorEvent, 'event' | 'json'>> {
  const event = await chat.events.next();
  assert.ok(event, 'the stream ended early');
  return { event: event.event, json: event.json };
}

const queuedAt = (position: number) => ({ event: 'queued', json: { position } });

async function messagesOf(student: Student) {
  return testDatabase().db.selectFrom('ai_messages').select(['role', 'content']).where('user_id', '=', student.id).orderBy('created_at').execute();
}

async function contractStudent(app: Awaited<ReturnType<typeof queueApp>>): Promise<Student> {
  const student = await app.newStudent();
  await setContractPlan(testDatabase().db, student.email, { per_minute: 600, per_day: 100_000, ai_per_hour: 1000 });
  return student;
}

/** Polls the queue until `probe` holds (a disconnect reaches the server a moment after the client aborts). */
async function until(probe: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('streamTutorChat in the AI queue (AI_MAX_CONCURRENCY=1)', () => {
  let server: Listening | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('lets a contract account’s request overtake waiting free ones, telling each waiting stream its position', async () => {
    const app = await queueApp({ maxQueue: 4 });
    server = app.server;
    const [holder, freeA, freeB] = await Promise.all([app.newStudent(), app.newStudent(), app.newStudent()]);
    const boss = await contractStudent(app);

    const holding = await app.chat(holder, 'holding');
    assert.equal((await next(holding)).event, 'message.started');
    const a = await app.chat(freeA, 'free A');
    assert.deepEqual(await next(a), queuedAt(1));
    const b = await app.chat(freeB, 'free B');
    assert.deepEqual(await next(b), queuedAt(2));
    const c = await app.chat(boss, 'contract');
    assert.deepEqual(await next(c), queuedAt(1), 'ahead of both free requests');
    assert.deepEqual(await next(a), queuedAt(2));
    assert.deepEqual(await next(b), queuedAt(3));
    assert.deepEqual(await messagesOf(freeA), [], 'a waiting request has stored nothing yet');

    app.finish('holding');
    assert.deepEqual((await holding.events.ended, holding.events.received.map((e) => e.event)), ['message.started', 'message.delta', 'message.completed']);
    assert.equal((await next(c)).event, 'message.started', 'the contract request starts next');
    assert.deepEqual(await next(a), queuedAt(1));
    assert.deepEqual(await next(b), queuedAt(2));

    app.finish('contract');
    assert.deepEqual((await c.events.ended, c.events.received.map((e) => e.event)), ['queued', 'message.started', 'message.delta', 'message.completed']);
    assert.equal((await next(a)).event, 'message.started', 'then the free requests, first come first served');
    assert.deepEqual(await next(b), queuedAt(1));
    assert.deepEqual(await messagesOf(freeA), [{ role: 'user', content: 'free A' }], 'stored once the reply starts');

    app.finish('free A');
    assert.equal((await next(b)).event, 'message.started');
    app.finish('free B');
    await b.events.ended;
    assert.deepEqual(
      b.events.received.map((e) => [e.event, e.id]),
      [['queued', '1'], ['queued', '2'], ['queued', '3'], ['queued', '4'], ['message.started', '5'], ['message.delta', '6'], ['message.completed', '7']],
    );
    assert.deepEqual([app.queue.running, app.queue.waiting], [0, 0]);
  });

  it('answers 503 with Retry-After before any stream when the queue is full, and stores nothing', async () => {
    const app = await queueApp({ maxQueue: 1 });
    server = app.server;
    const [holder, waiter, refused] = await Promise.all([app.newStudent(), app.newStudent(), app.newStudent()]);
    const holding = await app.chat(holder, 'holding');
    assert.equal((await next(holding)).event, 'message.started');
    const waiting = await app.chat(waiter, 'waiting');
    assert.deepEqual(await next(waiting), queuedAt(1));

    const res = await app.api.post('/api/ai/chat').set(refused.headers).send({ message: 'Is there room?' }).expect(503);
    assert.equal(res.body.code, 'service_unavailable');
    assert.match(res.body.detail, /The AI tutor is busy: every generation slot is taken and 1 requests are waiting/);
    assert.ok(Number(res.headers['retry-after']) > 0, `Retry-After: ${res.headers['retry-after']}`);
    assert.deepEqual(await messagesOf(refused), []);

    app.finish('holding');
    app.finish('waiting');
    await waiting.events.ended;
    assert.equal(waiting.events.received.at(-1)!.event, 'message.completed');
  });

  it('takes a client that disconnects while queued out of the queue: its place is free, nothing is stored', async () => {
    const app = await queueApp({ maxQueue: 1 });
    server = app.server;
    const [holder, leaver, next1] = await Promise.all([app.newStudent(), app.newStudent(), app.newStudent()]);
    const holding = await app.chat(holder, 'holding');
    assert.equal((await next(holding)).event, 'message.started');
    const leaving = await app.chat(leaver, 'leaving');
    assert.deepEqual(await next(leaving), queuedAt(1));
    leaving.abort();
    await until(() => app.queue.waiting === 0, 'the queue is empty');

    const after = await app.chat(next1, 'after');
    assert.deepEqual(await next(after), queuedAt(1), 'queued, not refused: the place was freed');
    app.finish('holding');
    assert.equal((await next(after)).event, 'message.started');
    app.finish('after');
    await after.events.ended;
    assert.deepEqual(await messagesOf(leaver), []);
  });

  it('ends queued streams with a service_restarting error when the server stops, storing nothing for them', async () => {
    const lifecycle = createLifecycle();
    const app = await queueApp({ maxQueue: 2 }, lifecycle);
    server = app.server;
    const [holder, waiter] = await Promise.all([app.newStudent(), app.newStudent()]);
    const holding = await app.chat(holder, 'holding');
    assert.equal((await next(holding)).event, 'message.started');
    const waiting = await app.chat(waiter, 'waiting');
    assert.deepEqual(await next(waiting), queuedAt(1));

    lifecycle.endStreams();
    const stopped = await next(waiting);
    assert.equal(stopped.event, 'error');
    assert.equal(stopped.json.code, 'service_restarting');
    assert.match(stopped.json.detail, /nothing was stored/);
    await waiting.events.ended;
    await holding.events.ended;
    assert.equal(holding.events.received.at(-1)!.json.code, 'service_restarting', 'the running reply ends too');
    assert.deepEqual([app.queue.running, app.queue.waiting], [0, 0]);
    assert.deepEqual(await messagesOf(waiter), []);
  });
});
