// The AI queue seen from clients: small queues (most with AI_MAX_CONCURRENCY=1), real streams over the network, read
// as they arrive by eventsource-parser; the accounts' places are leases in the run's database. The tutor holds
// each reply until the test lets it finish, so who holds the slot is certain.
import assert from 'node:assert/strict';
import { setContractPlan } from '../../../db/queries/users.ts';
import type { Tutor } from '../../../services/ai/tutor/types.ts';
import { createAiQueue } from '../../../services/ai/queue.ts';
import { createLifecycle, type Lifecycle } from '../../../server/process/lifecycle.ts';
import { contractClient } from '../../support/contract.ts';
import { newStudent, type Student } from '../../support/general-app.ts';
import { listen, type Listening } from '../../support/listening.ts';
import { buildApp } from '../../support/partner-app.ts';
import { testDatabase } from '../../support/shared-database.ts';
import { readEvents, type LiveEvents, type TutorEvent } from '../../support/tutor-events.ts';

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

async function queueApp(limits: { maxQueue: number; maxConcurrency?: number }, lifecycle?: Lifecycle) {
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
  /** A chat whose status is not asserted: the 200's events, or the refusal's problem and Retry-After. */
  const attempt = async (student: Student, message: string, conversationId?: string) => {
    const client = new AbortController();
    const response = await fetch(`${server.baseUrl}/api/ai/chat`, {
      method: 'POST',
      headers: { ...student.headers, 'content-type': 'application/json' },
      body: JSON.stringify({ message, ...(conversationId ? { conversation_id: conversationId } : {}) }),
      signal: client.signal,
    });
    if (response.status === 200)
      return { status: 200, chat: { events: readEvents(response.body!), abort: () => client.abort() } as Chat };
    return {
      status: response.status,
      problem: (await response.json()) as { code: string; detail: string },
      retryAfter: response.headers.get('retry-after'),
    };
  };
  return { app, api: contractClient(app), queue, server, finish, chat, attempt, newStudent: () => newStudent(app) };
}

async function next(chat: Chat): Promise<Pick<TutorEvent, 'event' | 'json'>> {
  const event = await chat.events.next();
  assert.ok(event, 'the stream ended early');
  return { event: event.event, json: event.json };
}

const queuedAt = (position: number) => ({ event: 'queued', json: { position } });

async function messagesOf(student: Student) {
  return testDatabase()
    .db.selectFrom('ai_messages')
    .select(['role', 'content'])
    .where('user_id', '=', student.id)
    .orderBy('created_at')
    .execute();
}

/** The account's live reply leases: its replies queued or generating, in any process. */
async function repliesInFlight(student: Student): Promise<number> {
  const rows = await testDatabase()
    .db.selectFrom('account_leases')
    .select('id')
    .where('user_id', '=', student.id)
    .where('kind', '=', 'ai_reply')
    .where('expires_at', '>', new Date())
    .execute();
  return rows.length;
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

describe('streamTutorChat in the AI queue', () => {
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
    assert.deepEqual((await holding.events.ended, holding.events.received.map((e) => e.event)), [
      'message.started',
      'message.delta',
      'message.completed',
    ]);
    assert.equal((await next(c)).event, 'message.started', 'the contract request starts next');
    assert.deepEqual(await next(a), queuedAt(1));
    assert.deepEqual(await next(b), queuedAt(2));

    app.finish('contract');
    assert.deepEqual((await c.events.ended, c.events.received.map((e) => e.event)), [
      'queued',
      'message.started',
      'message.delta',
      'message.completed',
    ]);
    assert.equal((await next(a)).event, 'message.started', 'then the free requests, first come first served');
    assert.deepEqual(await next(b), queuedAt(1));
    assert.deepEqual(await messagesOf(freeA), [{ role: 'user', content: 'free A' }], 'stored once the reply starts');

    app.finish('free A');
    assert.equal((await next(b)).event, 'message.started');
    app.finish('free B');
    await b.events.ended;
    assert.deepEqual(
      b.events.received.map((e) => [e.event, e.id]),
      [
        ['queued', '1'],
        ['queued', '2'],
        ['queued', '3'],
        ['queued', '4'],
        ['message.started', '5'],
        ['message.delta', '6'],
        ['message.completed', '7'],
      ],
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

  it('admits at most 2 replies of one free account at once (queued or generating); the rest are 429 too_many_concurrent_replies, stored nothing, and another student still gets a slot', async () => {
    const app = await queueApp({ maxConcurrency: 4, maxQueue: 16 });
    server = app.server;
    const [attacker, victim] = await Promise.all([app.newStudent(), app.newStudent()]);
    const messages = Array.from({ length: 20 }, (_, i) => `attack ${i}`);
    const answers = await Promise.all(messages.map((message) => app.attempt(attacker, message)));

    const admitted = messages.filter((_, i) => answers[i]!.status === 200);
    const refused = answers.filter((answer) => answer.status !== 200);
    assert.equal(admitted.length, 2, `admitted ${admitted.length} of 20`);
    assert.deepEqual(new Set(refused.map((answer) => answer.status)), new Set([429]));
    for (const answer of refused) {
      assert.equal(answer.problem!.code, 'too_many_concurrent_replies');
      assert.match(answer.problem!.detail, /2 replies/);
      assert.ok(Number(answer.retryAfter) > 0, `Retry-After: ${answer.retryAfter}`);
    }
    for (const answer of answers.filter((a) => a.status === 200))
      assert.equal((await next(answer.chat!)).event, 'message.started');
    assert.deepEqual([app.queue.running, app.queue.waiting], [2, 0]);

    const other = await app.chat(victim, 'my turn');
    assert.equal((await next(other)).event, 'message.started', 'a free generation slot, at once');
    const stored = await messagesOf(attacker);
    assert.deepEqual(
      stored.map((m) => m.content).sort(),
      [...admitted].sort(),
      'nothing stored for the refused requests',
    );

    for (const message of [...admitted, 'my turn']) app.finish(message);
    await Promise.all([...answers.flatMap((a) => (a.chat ? [a.chat.events.ended] : [])), other.events.ended]);
    assert.deepEqual([app.queue.running, app.queue.waiting], [0, 0]);
    // The account's hourly budget (20) is spent: its places are checked in the database itself.
    assert.equal(await repliesInFlight(attacker), 0, 'the account’s places are free again');
  });

  it('counts queued and generating replies alike per account; a contract account gets 3 and still overtakes', async () => {
    const app = await queueApp({ maxConcurrency: 1, maxQueue: 8 });
    server = app.server;
    const [greedy, free] = await Promise.all([app.newStudent(), app.newStudent()]);
    const boss = await contractStudent(app);

    const g1 = await app.chat(greedy, 'g1');
    assert.equal((await next(g1)).event, 'message.started');
    const g2 = await app.chat(greedy, 'g2');
    assert.deepEqual(await next(g2), queuedAt(1));
    const g3 = await app.attempt(greedy, 'g3');
    assert.equal(g3.status, 429, 'one generating and one waiting: the account holds its 2');
    assert.equal(g3.problem!.code, 'too_many_concurrent_replies');
    const f1 = await app.chat(free, 'f1');
    assert.deepEqual(await next(f1), queuedAt(2));

    const contract = [];
    for (const [i, message] of ['c1', 'c2', 'c3'].entries()) {
      const c = await app.chat(boss, message);
      assert.deepEqual(await next(c), queuedAt(i + 1), `${message} goes ahead of every free request`);
      contract.push(c);
    }
    const c4 = await app.attempt(boss, 'c4');
    assert.equal(c4.status, 429, 'a contract account holds 3 at most');
    assert.equal(c4.problem!.code, 'too_many_concurrent_replies');
    assert.deepEqual([app.queue.running, app.queue.waiting], [1, 5]);

    for (const message of ['g1', 'c1', 'c2', 'c3', 'g2', 'f1']) app.finish(message);
    await Promise.all([g1, g2, f1, ...contract].map((c) => c.events.ended));
    assert.equal(contract[0]!.events.received.at(-1)!.event, 'message.completed');
    const order = (
      await testDatabase()
        .db.selectFrom('ai_messages')
        .select('content')
        .where('role', '=', 'user')
        .where('user_id', 'in', [greedy.id, free.id, boss.id])
        .orderBy('created_at')
        .execute()
    ).map((m) => m.content);
    assert.deepEqual(order, ['g1', 'c1', 'c2', 'c3', 'g2', 'f1'], 'started in this order');
    assert.deepEqual(
      await messagesOf(greedy).then((rows) => rows.filter((m) => m.role === 'user').map((m) => m.content)),
      ['g1', 'g2'],
    );
  });

  it('generates one reply at a time per conversation: a second concurrent message to it is refused', async () => {
    const app = await queueApp({ maxConcurrency: 4, maxQueue: 16 });
    server = app.server;
    const student = await app.newStudent();
    const first = await app.chat(student, 'first');
    const started = await next(first);
    app.finish('first');
    await first.events.ended;
    const conversationId = started.json.conversation_id as string;

    const followUp = await app.attempt(student, 'follow-up', conversationId);
    assert.equal(followUp.status, 200);
    assert.equal((await next(followUp.chat!)).event, 'message.started');
    const meanwhile = await app.attempt(student, 'meanwhile', conversationId);
    assert.equal(meanwhile.status, 429);
    assert.equal(meanwhile.problem!.code, 'too_many_concurrent_replies');
    assert.match(meanwhile.problem!.detail, /conversation/);
    const elsewhere = await app.attempt(student, 'elsewhere');
    assert.equal(elsewhere.status, 200, 'a new conversation is within the account’s 2');

    app.finish('follow-up');
    app.finish('elsewhere');
    await Promise.all([followUp.chat!.events.ended, elsewhere.chat!.events.ended]);
    assert.deepEqual(
      (await messagesOf(student)).filter((m) => m.role === 'user').map((m) => m.content),
      ['first', 'follow-up', 'elsewhere'],
    );
  });

  it('holds the account’s 2 across processes sharing the database: 20 requests spread over two servers admit 2', async () => {
    const [one, two] = [
      await queueApp({ maxConcurrency: 4, maxQueue: 16 }),
      await queueApp({ maxConcurrency: 4, maxQueue: 16 }),
    ];
    server = { close: async () => void (await Promise.all([one.server.close(), two.server.close()])) } as Listening;
    const attacker = await one.newStudent();
    const messages = Array.from({ length: 20 }, (_, i) => `spread ${i}`);
    const answers = await Promise.all(messages.map((message, i) => (i % 2 ? one : two).attempt(attacker, message)));
    assert.equal(answers.filter((answer) => answer.status === 200).length, 2);
    assert.deepEqual(
      new Set(answers.filter((answer) => answer.status !== 200).map((answer) => answer.problem!.code)),
      new Set(['too_many_concurrent_replies']),
    );
    for (const message of messages) {
      one.finish(message);
      two.finish(message);
    }
    await Promise.all(answers.flatMap((answer) => (answer.chat ? [answer.chat.events.ended] : [])));
  });
});
