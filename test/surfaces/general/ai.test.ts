import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { localTutor } from '../../../services/ai/tutor/local.ts';
import { openAiCompatibleTutor } from '../../../services/ai/tutor/openai-compatible.ts';
import type { Tutor } from '../../../services/ai/tutor/types.ts';
import { createLifecycle, type Lifecycle } from '../../../server/process/lifecycle.ts';
import { startChatCompletionsServer, type ChatCompletionsServer } from '../../support/chat-completions-server.ts';
import { contractClient } from '../../support/contract.ts';
import { newStudent, type Student } from '../../support/general-app.ts';
import { assertIdRefusals } from '../../support/refusals.ts';
import { listen } from '../../support/listening.ts';
import { buildApp } from '../../support/partner-app.ts';
import { testDatabase } from '../../support/shared-database.ts';
import { chatOperation as chat, eventsOf } from '../../support/tutor-events.ts';

async function chatApp(tutor: Tutor = localTutor({ pauseMs: 0 }), lifecycle?: Lifecycle) {
  const app = await buildApp({ tutor, ...(lifecycle ? { lifecycle } : {}) });
  return {
    app,
    api: contractClient(app),
    db: testDatabase().db,
    newStudent: (options?: Parameters<typeof newStudent>[1]) => newStudent(app, options),
  };
}

async function messagesOf(userId: string) {
  return testDatabase()
    .db.selectFrom('ai_messages')
    .select(['id', 'role', 'content', 'conversation_id', 'finish_reason'])
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .orderBy('role', 'desc') // the student's message and a reply at the same instant: the student's first
    .execute();
}

/** A deck with `due` cards due an hour ago and one due tomorrow. */
async function deckWithDueCards(student: Student, title: string, due: number): Promise<string> {
  const { db } = testDatabase();
  const deck = await db
    .insertInto('flashcard_decks')
    .values({ user_id: student.id, title })
    .returning('id')
    .executeTakeFirstOrThrow();
  const at = (hours: number) => new Date(Date.now() + hours * 3_600_000);
  const cards = [...Array.from({ length: due }, () => at(-1)), at(24)].map((next_due_at, i) => ({
    deck_id: deck.id,
    user_id: student.id,
    front: `Q${i}`,
    back: `A${i}`,
    next_due_at,
  }));
  await db.insertInto('flashcard_cards').values(cards).execute();
  return deck.id;
}

describe('streamTutorChat', () => {
  it('streams started, deltas and completed, with valid JSON data, answering from the student’s own data', async () => {
    const { api, newStudent } = await chatApp();
    const alice = await newStudent();
    await deckWithDueCards(alice, 'Anatomy', 12);
    const res = await api
      .post('/api/ai/chat')
      .set(alice.headers)
      .send({ message: 'Can you explain the Krebs cycle?' })
      .expect(200);
    assert.match(String(res.headers['content-type']), /^text\/event-stream/);
    assert.ok(chat.responses['200'].content['text/event-stream'], 'the spec documents text/event-stream for the 200');
    assert.match(String(res.headers['cache-control']), /no-cache/);
    assert.match(String(res.headers['cache-control']), /no-transform/);

    const events = eventsOf(res.text);
    assert.deepEqual(
      events.map((e) => e.event),
      ['message.started', ...Array(events.length - 2).fill('message.delta'), 'message.completed'],
    );
    assert.ok(events.length >= 4, 'the reply comes in several pieces');
    const [started] = events;
    assert.equal(started!.json.model, 'local-tutor');
    const reply = events
      .filter((e) => e.event === 'message.delta')
      .map((e) => e.json.text)
      .join('');
    assert.match(reply, /the Krebs cycle/);
    assert.match(reply, /You have 12 cards due in Anatomy/);
    assert.match(reply, /review the 12 due cards in Anatomy/);
    assert.deepEqual(events.at(-1)!.json, {
      message_id: started!.json.message_id,
      finish_reason: 'stop',
      usage: { input_tokens: null, output_tokens: null },
    });
  });

  it('stores the message and the whole reply under the student, in one conversation that can be continued', async () => {
    const { api, newStudent } = await chatApp();
    const [alice, bob] = await Promise.all([newStudent(), newStudent()]);
    const first = eventsOf(
      (await api.post('/api/ai/chat').set(alice.headers).send({ message: 'What is osmosis?' }).expect(200)).text,
    );
    const { conversation_id, message_id, user_message_id } = first[0]!.json;
    const reply = first
      .filter((e) => e.event === 'message.delta')
      .map((e) => e.json.text)
      .join('');

    const second = eventsOf(
      (
        await api
          .post('/api/ai/chat')
          .set(alice.headers)
          .send({ message: 'And diffusion?', conversation_id })
          .expect(200)
      ).text,
    );
    assert.equal(second[0]!.json.conversation_id, conversation_id);
    assert.match(second[1]!.json.text, /^Back to diffusion/);

    const stored = await messagesOf(alice.id);
    assert.deepEqual(
      stored.map(({ role, conversation_id: c, finish_reason }) => [role, c, finish_reason]),
      [
        ['user', conversation_id, null],
        ['assistant', conversation_id, 'stop'],
        ['user', conversation_id, null],
        ['assistant', conversation_id, 'stop'],
      ],
    );
    assert.deepEqual(
      stored.slice(0, 2).map((m) => [m.id, m.content]),
      [
        [user_message_id, 'What is osmosis?'],
        [message_id, reply],
      ],
    );
    assert.deepEqual(await messagesOf(bob.id), []);
  });

  it('focuses on a deck or an exam of the student’s when asked to', async () => {
    const { api, db, newStudent } = await chatApp();
    const alice = await newStudent({ time_zone: 'Asia/Almaty' });
    const deckId = await deckWithDueCards(alice, 'Organic chemistry', 3);
    const examDate = new Date(Date.now() + 5 * 86_400_000).toISOString().slice(0, 10);
    const exam = await db
      .insertInto('exams')
      .values({ user_id: alice.id, subject: 'Biology', exam_date: examDate })
      .returning('id')
      .executeTakeFirstOrThrow();

    const onDeck = eventsOf(
      (
        await api
          .post('/api/ai/chat')
          .set(alice.headers)
          .send({ message: 'Quiz me', context: { deck_id: deckId } })
          .expect(200)
      ).text,
    );
    const deckReply = onDeck
      .filter((e) => e.event === 'message.delta')
      .map((e) => e.json.text)
      .join('');
    assert.match(deckReply, /Organic chemistry has 4 cards, 3 due now/);

    const onExam = eventsOf(
      (
        await api
          .post('/api/ai/chat')
          .set(alice.headers)
          .send({ message: 'What first?', context: { exam_id: exam.id } })
          .expect(200)
      ).text,
    );
    const examReply = onExam
      .filter((e) => e.event === 'message.delta')
      .map((e) => e.json.text)
      .join('');
    assert.match(examReply, new RegExp(`Your Biology exam is in [45] days \\(${examDate}\\)`));
  });

  it('answers 400 for an empty, blank, missing or too long message, and stores nothing', async () => {
    const { api, newStudent } = await chatApp();
    const alice = await newStudent();
    for (const body of [
      { message: '' },
      { message: '   \n ' },
      {},
      { message: 'x'.repeat(4001) },
      { message: 'hi', context: {} },
    ]) {
      const res = await api.post('/api/ai/chat').set(alice.headers).send(body).expect(400);
      assert.equal(res.body.code, 'invalid_request');
    }
    assert.deepEqual(await messagesOf(alice.id), []);
  });

  it('answers 401 without credentials and 403 without the ai:chat scope', async () => {
    const { api, newStudent } = await chatApp();
    await api.post('/api/ai/chat').send({ message: 'Hello' }).expect(401);
    const narrow = await newStudent({ scopes: ['profile:read', 'decks:read'] });
    const res = await api.post('/api/ai/chat').set(narrow.headers).send({ message: 'Hello' }).expect(403);
    assert.equal(res.body.code, 'insufficient_scope');
    assert.deepEqual(await messagesOf(narrow.id), []);
  });

  it('answers 404 for another student’s conversation, deck or exam exactly as for an unknown one, and stores nothing', async () => {
    const { api, db, newStudent } = await chatApp();
    const [alice, bob] = await Promise.all([newStudent(), newStudent()]);
    const bobs = eventsOf(
      (await api.post('/api/ai/chat').set(bob.headers).send({ message: 'Hi' }).expect(200)).text,
    )[0]!.json.conversation_id;
    const bobsDeck = await deckWithDueCards(bob, 'Secret deck', 1);
    const bobsExam = await db
      .insertInto('exams')
      .values({ user_id: bob.id, subject: 'Law', exam_date: '2030-01-10' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const cases = [
      [{ conversation_id: bobs }, { conversation_id: randomUUID() }],
      [{ context: { deck_id: bobsDeck } }, { context: { deck_id: randomUUID() } }],
      [{ context: { exam_id: bobsExam.id } }, { context: { exam_id: randomUUID() } }],
    ];
    for (const [others, unknown] of cases) {
      const a = await api
        .post('/api/ai/chat')
        .set(alice.headers)
        .send({ message: 'Continue', ...others })
        .expect(404);
      const b = await api
        .post('/api/ai/chat')
        .set(alice.headers)
        .send({ message: 'Continue', ...unknown })
        .expect(404);
      assert.equal(a.body.code, 'not_found');
      assert.equal(a.body.detail.replace(/[0-9a-f-]{36}/, '<id>'), b.body.detail.replace(/[0-9a-f-]{36}/, '<id>'));
    }
    assert.deepEqual(await messagesOf(alice.id), []);
    assert.equal((await messagesOf(bob.id)).length, 2, "bob's conversation is untouched");
  });

  it('answers the 21st chat request of a free student within the hour with 429, Retry-After and RateLimit headers', async () => {
    const { api, newStudent } = await chatApp();
    const alice = await newStudent();
    for (let i = 0; i < 20; i++) {
      const ok = await api
        .post('/api/ai/chat')
        .set(alice.headers)
        .send({ message: `Question ${i}` })
        .expect(200);
      assert.match(String(ok.headers['ratelimit']), new RegExp(`"hour"; r=${19 - i};`));
    }
    const refused = await api.post('/api/ai/chat').set(alice.headers).send({ message: 'One more' }).expect(429);
    assert.equal(refused.body.code, 'rate_limited');
    assert.match(refused.body.detail, /per-hour limit .* \(20 requests\)/);
    const retryAfter = Number(refused.headers['retry-after']);
    assert.ok(retryAfter > 0 && retryAfter <= 3600, `Retry-After: ${refused.headers['retry-after']}`);
    assert.match(String(refused.headers['ratelimit']), /"hour"; r=0;/);
    assert.match(String(refused.headers['ratelimit-policy']), /"hour"; q=20; w=3600/);
    // The hour limit is on /api/ai/* only: other operations still answer.
    await api.get('/api/users/me').set(alice.headers).expect(200);
    assert.equal((await messagesOf(alice.id)).length, 40);
  });

  describe('with an OpenAI-compatible provider (a local chat-completions server)', () => {
    let upstream: ChatCompletionsServer;
    before(async () => {
      upstream = await startChatCompletionsServer();
    });
    after(() => upstream.close());

    const providerApp = (lifecycle?: Lifecycle) =>
      chatApp(
        openAiCompatibleTutor({ baseUrl: upstream.baseUrl, apiKey: 'sk-test-123', model: 'test-model' }),
        lifecycle,
      );

    it('relays the provider’s stream, reports its usage and sends it the student’s facts and the conversation', async () => {
      const { api, newStudent } = await providerApp();
      const alice = await newStudent();
      await deckWithDueCards(alice, 'Anatomy', 2);
      upstream.behave({
        kind: 'reply',
        pieces: ['The Krebs ', 'cycle turns ', 'acetyl-CoA into CO2.'],
        usage: { prompt_tokens: 120, completion_tokens: 9 },
      });
      const first = eventsOf(
        (await api.post('/api/ai/chat').set(alice.headers).send({ message: 'Explain the Krebs cycle' }).expect(200))
          .text,
      );
      assert.deepEqual(
        first.map((e) => e.event),
        ['message.started', 'message.delta', 'message.delta', 'message.delta', 'message.completed'],
      );
      assert.equal(first[0]!.json.model, 'test-model');
      assert.deepEqual(first.at(-1)!.json.usage, { input_tokens: 120, output_tokens: 9 });
      const sent = upstream.requests.at(-1)!;
      assert.equal(sent.path, '/v1/chat/completions');
      assert.equal(sent.headers.authorization, 'Bearer sk-test-123');
      assert.equal(sent.body.model, 'test-model');
      assert.equal(sent.body.stream, true);
      assert.match(sent.body.messages[0]!.content, /flashcard deck "Anatomy": 2 cards due now/);
      assert.deepEqual(sent.body.messages.slice(1), [{ role: 'user', content: 'Explain the Krebs cycle' }]);

      upstream.behave({ kind: 'reply', pieces: ['Glycolysis first.'], finish_reason: 'length' });
      const conversation_id = first[0]!.json.conversation_id;
      const second = eventsOf(
        (
          await api
            .post('/api/ai/chat')
            .set(alice.headers)
            .send({ message: 'What comes before?', conversation_id })
            .expect(200)
        ).text,
      );
      assert.equal(second.at(-1)!.json.finish_reason, 'length');
      assert.deepEqual(upstream.requests.at(-1)!.body.messages.slice(1), [
        { role: 'user', content: 'Explain the Krebs cycle' },
        { role: 'assistant', content: 'The Krebs cycle turns acetyl-CoA into CO2.' },
        { role: 'user', content: 'What comes before?' },
      ]);
      assert.deepEqual(
        (await messagesOf(alice.id)).map((m) => m.finish_reason),
        [null, 'stop', null, 'length'],
      );
    });

    it('asks the provider for at most 2,000 tokens and cuts a longer reply at 16,000 characters, streamed and stored as length', async () => {
      const { api, newStudent } = await providerApp();
      const alice = await newStudent();
      // A provider that ignores max_tokens: 20 pieces of 1,000 characters, then a normal end.
      upstream.behave({ kind: 'reply', pieces: Array.from({ length: 20 }, (_, i) => String(i % 10).repeat(1_000)) });
      const events = eventsOf(
        (await api.post('/api/ai/chat').set(alice.headers).send({ message: 'Talk a lot' }).expect(200)).text,
      );
      assert.equal(upstream.requests.at(-1)!.body.max_tokens, 2_000);
      const streamed = events
        .filter((e) => e.event === 'message.delta')
        .map((e) => e.json.text)
        .join('');
      assert.equal(streamed.length, 16_000);
      assert.equal(events.filter((e) => e.event === 'message.delta').length, 16, 'nothing sent past the bound');
      assert.deepEqual(events.at(-1)!.json, {
        message_id: events[0]!.json.message_id,
        finish_reason: 'length',
        usage: { input_tokens: null, output_tokens: null },
      });
      const stored = (await messagesOf(alice.id)).find((m) => m.role === 'assistant');
      assert.deepEqual([stored?.content.length, stored?.finish_reason], [16_000, 'length']);
    });

    it('shows the model the most recent turns only, within 24,000 characters, however long the conversation', async () => {
      const { api, newStudent } = await providerApp();
      const alice = await newStudent();
      upstream.behave({ kind: 'reply', pieces: ['a'.repeat(16_000)] });
      const first = eventsOf(
        (await api.post('/api/ai/chat').set(alice.headers).send({ message: 'one' }).expect(200)).text,
      );
      const conversation_id = first[0]!.json.conversation_id;
      upstream.behave({ kind: 'reply', pieces: ['b'.repeat(16_000)] });
      await api.post('/api/ai/chat').set(alice.headers).send({ message: 'two', conversation_id }).expect(200);
      upstream.behave({ kind: 'reply', pieces: ['Short.'] });
      await api.post('/api/ai/chat').set(alice.headers).send({ message: 'three', conversation_id }).expect(200);

      const shown = upstream.requests.at(-1)!.body.messages.slice(1);
      assert.deepEqual(
        shown.map((m) => [m.role, m.content.slice(0, 3), m.content.length]),
        [
          ['user', 'two', 3],
          ['assistant', 'bbb', 16_000],
          ['user', 'thr', 5],
        ],
        'the first exchange does not fit beside the second',
      );
    });

    it('ends the stream with a tutor_unavailable error event when the provider fails, keeping the student’s message', async () => {
      const { api, newStudent } = await providerApp();
      const alice = await newStudent();
      upstream.behave({ kind: 'status', status: 503 });
      const events = eventsOf(
        (await api.post('/api/ai/chat').set(alice.headers).send({ message: 'Anyone there?' }).expect(200)).text,
      );
      assert.deepEqual(
        events.map((e) => e.event),
        ['message.started', 'error'],
      );
      assert.equal(events[1]!.json.code, 'tutor_unavailable');
      assert.match(events[1]!.json.detail, /503/);
      assert.deepEqual(
        (await messagesOf(alice.id)).map((m) => [m.role, m.content]),
        [['user', 'Anyone there?']],
      );
    });

    it('stops generating when the client disconnects, and stores what was streamed as an interrupted reply', async () => {
      const { app, newStudent } = await providerApp();
      const alice = await newStudent();
      upstream.behave({ kind: 'endless', everyMs: 20 });
      const server = await listen(app);
      try {
        const client = new AbortController();
        await streamUntilTwoDeltas(server.baseUrl, alice, 'Talk forever', client.signal);
        client.abort();

        const upstreamRequest = upstream.requests.at(-1)!;
        assert.equal(await upstreamRequest.ended, 'client_closed', 'the provider request is cancelled');
        const stored = await eventually(async () => (await messagesOf(alice.id)).find((m) => m.role === 'assistant'));
        assert.equal(stored.finish_reason, 'interrupted');
        assert.match(stored.content, /^piece 1\. piece 2\. /);
      } finally {
        await server.close();
      }
    });

    it('keeps a reply whose stream dropped readable: getConversation shows it as streamed, interrupted', async () => {
      const { app, api, newStudent } = await providerApp();
      const alice = await newStudent();
      upstream.behave({ kind: 'endless', everyMs: 20 });
      const server = await listen(app);
      try {
        const client = new AbortController();
        const { received } = await streamUntilTwoDeltas(server.baseUrl, alice, 'Talk forever', client.signal);
        client.abort();
        const started = eventsOf(received)[0]!.json;
        const reply = await eventually(async () => {
          const res = await api.get(`/api/ai/conversations/${started.conversation_id}`).set(alice.headers).expect(200);
          return res.body.messages.data.find((m: { role: string }) => m.role === 'assistant');
        });
        assert.equal(reply.id, started.message_id, 'stored under the id message.started announced');
        assert.equal(reply.finish_reason, 'interrupted');
        assert.match(reply.content, /^piece 1\. piece 2\. /);
        const listed = await api.get('/api/ai/conversations').set(alice.headers).expect(200);
        assert.deepEqual(
          listed.body.data.map((c: { id: string; title: string }) => [c.id, c.title]),
          [[started.conversation_id, 'Talk forever']],
        );
      } finally {
        await server.close();
      }
    });

    it('ends the stream with a service_restarting error event when the server stops, and stores the reply so far as interrupted', async () => {
      const lifecycle = createLifecycle();
      const { app, newStudent } = await providerApp(lifecycle);
      const alice = await newStudent();
      upstream.behave({ kind: 'endless', everyMs: 20 });
      const server = await listen(app);
      try {
        const stream = await streamUntilTwoDeltas(server.baseUrl, alice, 'Talk until the deploy');
        let received = stream.received;
        const reader = stream.reader;
        lifecycle.endStreams();
        for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) received += chunk.value;

        const events = eventsOf(received);
        assert.equal(events.at(-1)!.event, 'error');
        assert.equal(events.at(-1)!.json.code, 'service_restarting');
        const streamed = events
          .filter((e) => e.event === 'message.delta')
          .map((e) => e.json.text)
          .join('');
        // Stored before the stream ended, so before a stop could close the database.
        const stored = (await messagesOf(alice.id)).find((m) => m.role === 'assistant');
        assert.equal(stored?.finish_reason, 'interrupted');
        assert.equal(stored.content, streamed, 'the stored reply is what the student saw');
        assert.equal(await upstream.requests.at(-1)!.ended, 'client_closed', 'the provider request is cancelled');
      } finally {
        await server.close();
      }
    });
  });
});

describe('listConversations, getConversation, deleteConversation', () => {
  /** A chat of `student`'s with the built-in tutor; its `message.started` data. */
  async function chatOnce(
    api: ReturnType<typeof contractClient>,
    student: Student,
    message: string,
    conversation_id?: string,
  ) {
    const res = await api
      .post('/api/ai/chat')
      .set(student.headers)
      .send({ message, ...(conversation_id ? { conversation_id } : {}) })
      .expect(200);
    return eventsOf(res.text)[0]!.json as { conversation_id: string; message_id: string; user_message_id: string };
  }

  it('lists the student’s conversations, most recently active first, a page at a time', async () => {
    const { api, newStudent } = await chatApp();
    const [alice, bob] = await Promise.all([newStudent(), newStudent()]);
    const osmosis = await chatOnce(api, alice, 'What is osmosis?\nI keep mixing it up.');
    const krebs = await chatOnce(api, alice, 'Explain the Krebs cycle');
    const mitosis = await chatOnce(api, alice, 'Mitosis phases?');
    await chatOnce(api, alice, 'And diffusion?', osmosis.conversation_id); // osmosis is now the latest
    await chatOnce(api, bob, 'Bob asks');

    const all = await api.get('/api/ai/conversations').set(alice.headers).expect(200);
    assert.deepEqual(
      all.body.data.map((c: { id: string }) => c.id),
      [osmosis.conversation_id, mitosis.conversation_id, krebs.conversation_id],
    );
    assert.equal(all.body.data[0].title, 'What is osmosis?', 'named after the first line of the first message');
    assert.ok(all.body.data[0].updated_at > all.body.data[0].created_at);
    assert.deepEqual([all.body.has_more, all.body.next_cursor], [false, null]);

    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const res: { body: any } = await api
        .get('/api/ai/conversations')
        .query({ limit: 2, ...(cursor ? { cursor } : {}) })
        .set(alice.headers)
        .expect(200);
      ids.push(...res.body.data.map((c: { id: string }) => c.id));
      assert.equal(res.body.has_more, res.body.next_cursor !== null);
      cursor = res.body.next_cursor;
    } while (cursor);
    assert.deepEqual(
      ids,
      all.body.data.map((c: { id: string }) => c.id),
    );

    const bad = await api
      .get('/api/ai/conversations')
      .query({ cursor: 'bm90LWEtY3Vyc29y' })
      .set(alice.headers)
      .expect(400);
    assert.deepEqual(
      bad.body.errors.map((e: { path: string }) => e.path),
      ['query.cursor'],
    );
  });

  it('reads a conversation with its messages oldest first, paginated, as they were stored', async () => {
    const { api, newStudent } = await chatApp();
    const alice = await newStudent();
    const first = await chatOnce(api, alice, 'What is osmosis?');
    const second = await chatOnce(api, alice, 'And diffusion?', first.conversation_id);
    const stored = await messagesOf(alice.id);

    const whole = await api.get(`/api/ai/conversations/${first.conversation_id}`).set(alice.headers).expect(200);
    assert.equal(whole.body.id, first.conversation_id);
    assert.equal(whole.body.title, 'What is osmosis?');
    const messages = whole.body.messages.data as Array<{
      id: string;
      role: string;
      content: string;
      finish_reason: string | null;
    }>;
    assert.deepEqual(
      messages.map((m) => m.id),
      [first.user_message_id, first.message_id, second.user_message_id, second.message_id],
    );
    assert.deepEqual(
      messages.map((m) => [m.role, m.content, m.finish_reason]),
      stored.map((m) => [m.role, m.content, m.finish_reason]),
    );
    assert.deepEqual([whole.body.messages.has_more, whole.body.messages.next_cursor], [false, null]);

    const firstPage = await api
      .get(`/api/ai/conversations/${first.conversation_id}`)
      .query({ limit: 3 })
      .set(alice.headers)
      .expect(200);
    assert.deepEqual(
      firstPage.body.messages.data.map((m: { id: string }) => m.id),
      messages.slice(0, 3).map((m) => m.id),
    );
    assert.equal(firstPage.body.messages.has_more, true);
    const rest = await api
      .get(`/api/ai/conversations/${first.conversation_id}`)
      .query({ limit: 3, cursor: firstPage.body.messages.next_cursor })
      .set(alice.headers)
      .expect(200);
    assert.deepEqual(
      rest.body.messages.data.map((m: { id: string }) => m.id),
      [second.message_id],
    );
    assert.equal(rest.body.messages.next_cursor, null);
  });

  it('deletes a conversation with its messages; a continued chat in it is then 404', async () => {
    const { api, newStudent } = await chatApp();
    const alice = await newStudent();
    const kept = await chatOnce(api, alice, 'Keep this one');
    const gone = await chatOnce(api, alice, 'Forget this one');
    await api.delete(`/api/ai/conversations/${gone.conversation_id}`).set(alice.headers).expect(204);
    await api.get(`/api/ai/conversations/${gone.conversation_id}`).set(alice.headers).expect(404);
    await api.delete(`/api/ai/conversations/${gone.conversation_id}`).set(alice.headers).expect(404);
    await api
      .post('/api/ai/chat')
      .set(alice.headers)
      .send({ message: 'Still there?', conversation_id: gone.conversation_id })
      .expect(404);
    assert.deepEqual([...new Set((await messagesOf(alice.id)).map((m) => m.conversation_id))], [kept.conversation_id]);
    const listed = await api.get('/api/ai/conversations').set(alice.headers).expect(200);
    assert.deepEqual(
      listed.body.data.map((c: { id: string }) => c.id),
      [kept.conversation_id],
    );
  });

  it('ends a reply whose conversation is deleted while it streams with an error event, and stores nothing', async () => {
    let midStream = async () => {};
    const deletingTutor: Tutor = {
      model: 'deleting-tutor',
      async *reply() {
        yield { type: 'delta', text: 'Half a thought' };
        await midStream();
        yield { type: 'delta', text: ', and the rest.' };
        yield { type: 'finish', finish_reason: 'stop', usage: { input_tokens: null, output_tokens: null } };
      },
    };
    const { api, newStudent, db } = await chatApp(deletingTutor);
    const alice = await newStudent();
    midStream = async () => {
      const { id } = await db
        .selectFrom('ai_conversations')
        .select('id')
        .where('user_id', '=', alice.id)
        .executeTakeFirstOrThrow();
      await api.delete(`/api/ai/conversations/${id}`).set(alice.headers).expect(204);
    };
    const events = eventsOf(
      (await api.post('/api/ai/chat').set(alice.headers).send({ message: 'Tell me everything' }).expect(200)).text,
    );
    assert.deepEqual(
      events.map((e) => e.event),
      ['message.started', 'message.delta', 'message.delta', 'error'],
    );
    assert.equal(events.at(-1)!.json.code, 'conversation_deleted');
    assert.deepEqual(await messagesOf(alice.id), []);
    assert.equal(
      (await db.selectFrom('ai_conversations').select('id').where('user_id', '=', alice.id).execute()).length,
      0,
    );
  });

  it('answers 401, 403 without ai:chat, and 404 for another student’s conversation on listConversations', async () => {
    const { api, newStudent } = await chatApp();
    await api.get('/api/ai/conversations').expect(401);
    const narrow = await newStudent({ scopes: ['profile:read'] });
    assert.equal(
      (await api.get('/api/ai/conversations').set(narrow.headers).expect(403)).body.code,
      'insufficient_scope',
    );
  });

  for (const method of ['get', 'delete'] as const) {
    it(`refuses ${method.toUpperCase()} /api/ai/conversations/{id} without credentials, without ai:chat, for another student and for a malformed id`, () =>
      assertIdRefusals({
        method,
        path: (id) => `/api/ai/conversations/${id}`,
        otherScope: 'profile:read',
        create: async (api, owner) => (await chatOnce(api, owner, 'Mine')).conversation_id,
      }));
  }
});

/** Starts a chat over the network and reads its stream until two deltas came; the rest is left to the caller. */
async function streamUntilTwoDeltas(baseUrl: string, student: Student, message: string, signal?: AbortSignal) {
  const response = await fetch(`${baseUrl}/api/ai/chat`, {
    method: 'POST',
    headers: { ...student.headers, 'content-type': 'application/json' },
    body: JSON.stringify({ message }),
    ...(signal ? { signal } : {}),
  });
  assert.equal(response.status, 200);
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let received = '';
  while (!/event: ?message\.delta[\s\S]*event: ?message\.delta/.test(received)) {
    const { done, value } = await reader.read();
    assert.ok(!done, `the stream ended early: ${received}`);
    received += value;
  }
  return { reader, received };
}

/** Polls until `probe` returns something (the reply is stored just after the disconnect is noticed). */
async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
