// GET /api/exams/readiness/stream, read live with a real SSE parser (eventsource-parser) over a real connection:
// the snapshot, moves in order with only the exams that moved, heartbeats, resumption with Last-Event-ID,
// disconnects, the stream's end on a stop and after its longest time, and a lost listening connection on
// PostgreSQL. Every event's data is checked against its schema in the spec (`x-sse-events`).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { newStudent, type Student } from '../support/general-app.ts';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { sql } from 'kysely';
import { LISTENER_APPLICATION_NAME } from '../../db/notifications.ts';
import { createLifecycle, type LifecycleControl } from '../../server/lifecycle.ts';
import type { StreamSettings } from '../../server/events/readiness-stream.ts';
import { contractClient } from '../support/contract.ts';
import { listen, type Listening } from '../support/listening.ts';
import { buildApp } from '../support/partner-app.ts';
import { testDatabase } from '../support/root-hooks.ts';
import { openEventStream, type LiveEventStream, type ServerSentEvent } from '../support/sse.ts';

const PATH = '/api/exams/readiness/stream';
const spec = JSON.parse(readFileSync(new URL('../../generated/general/openapi.json', import.meta.url), 'utf8'));
const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats.default(ajv);
// The event schemas refer to the spec's components: the whole spec is added, each event's schema compiled in place.
ajv.addSchema(spec, 'general');
const eventSchemas = Object.fromEntries(
  Object.keys(spec.paths[PATH].get.responses['200']['x-sse-events']).map((name) => [
    name,
    ajv.compile({ $ref: `general#/paths/${PATH.replace(/\//g, '~1')}/get/responses/200/x-sse-events/${name}` }),
  ]),
);

/** The event's JSON data, checked against the spec's schema of its name; every event has a numeric id. */
function dataOf(event: ServerSentEvent): any {
  const validate = eventSchemas[event.event];
  assert.ok(validate, `event ${event.event} is not documented`);
  const data = JSON.parse(event.data);
  assert.ok(validate(data), `${event.event} data breaks its schema: ${ajv.errorsText(validate.errors)}`);
  assert.match(event.id ?? '', /^\d+$/, `${event.event} has a numeric id`);
  return data;
}

const LIVE: StreamSettings = { heartbeatMs: 15_000, maxDurationMs: 60_000 };

describe('streamExamReadiness', () => {
  let lifecycle: LifecycleControl;
  let server: Listening;
  let api: ReturnType<typeof contractClient>;
  let app: Awaited<ReturnType<typeof buildApp>>;
  const streams: LiveEventStream[] = [];

  async function serve(settings: StreamSettings = LIVE) {
    lifecycle = createLifecycle();
    app = await buildApp({ lifecycle, streamSettings: settings });
    api = contractClient(app);
    server = await listen(app);
  }
  async function open(student: Student, headers: Record<string, string> = {}) {
    const stream = await openEventStream(server.baseUrl + PATH, { ...student.headers, ...headers });
    streams.push(stream);
    assert.equal(stream.status, 200);
    assert.match(stream.headers.get('content-type') ?? '', /^text\/event-stream/);
    return stream;
  }

  /** A student with two exams: Biology prepared by a deck of two cards and a task, History by nothing. */
  async function preparedStudent() {
    const student = await newStudent(app);
    return prepare(student);
  }
  async function prepare(student: Student) {
    const h = student.headers;
    const deck = (await api.post('/api/flashcards/decks').set(h).send({ title: 'Cells' }).expect(201)).body;
    const cards = [];
    for (const front of ['Mitochondria?', 'Ribosome?']) cards.push((await api.post(`/api/flashcards/decks/${deck.id}/cards`).set(h).send({ front, back: 'An organelle' }).expect(201)).body);
    const task = (await api.post('/api/tasks').set(h).send({ title: 'Read chapter 3', due_at: inDays(2) + 'T12:00:00Z', course: 'Biology' }).expect(201)).body;
    const biology = (await api.post('/api/exams').set(h).send({ subject: 'Biology', exam_date: inDays(10), deck_ids: [deck.id], task_ids: [task.id] }).expect(201)).body;
    const history = (await api.post('/api/exams').set(h).send({ subject: 'History', exam_date: inDays(20) }).expect(201)).body;
    return { student, deck, cards, task, biology, history };
  }
  const review = (student: Student, cardId: string) => api.post(`/api/flashcards/cards/${cardId}/reviews`).set(student.headers).send({ grade: 5 }).expect(201);
  const readinessOf = async (student: Student, examId: string) => (await api.get(`/api/exams/${examId}`).set(student.headers).expect(200)).body.readiness;

  afterEach(async () => {
    streams.splice(0).forEach((stream) => stream.close());
    await server?.close();
  });

  describe('on a live connection', () => {
    beforeEach(() => serve());

    it('opens with a snapshot of every upcoming exam, then sends each move in order, with only the exams that moved', async () => {
      const { student, cards, task, biology, history } = await preparedStudent();
      const stream = await open(student);
      const first = await stream.next();
      assert.equal(stream.retry, 2000, 'the stream tells EventSource how long to wait before it reconnects');
      assert.equal(first.event, 'snapshot');
      const snapshot = dataOf(first);
      assert.equal(snapshot.missed, false);
      assert.deepEqual(snapshot.exams.map((e: any) => e.subject), ['Biology', 'History']);
      assert.deepEqual(snapshot.exams[0].readiness, await readinessOf(student, biology.id));

      // The day's first review makes it a study day: consistency moves for both exams, memory for Biology.
      await review(student, cards[0].id);
      const firstReview = await stream.next();
      assert.equal(firstReview.event, 'readiness');
      assert.ok(Number(firstReview.id) > Number(first.id), 'ids increase');
      const moved = dataOf(firstReview);
      assert.deepEqual(moved.exams.map((e: any) => e.exam_id).sort(), [biology.id, history.id].sort());
      assert.equal(moved.exams.find((e: any) => e.exam_id === biology.id).readiness.details.cards_reviewed, 1);

      // A second review the same day moves Biology's memory only.
      await review(student, cards[1].id);
      const secondReview = await stream.next();
      assert.ok(Number(secondReview.id) > Number(firstReview.id));
      assert.deepEqual(dataOf(secondReview).exams.map((e: any) => e.exam_id), [biology.id]);

      await api.patch(`/api/tasks/${task.id}`).set(student.headers).send({ status: 'completed' }).expect(200);
      const completed = dataOf(await stream.next());
      assert.deepEqual(completed.exams.map((e: any) => e.exam_id), [biology.id]);
      assert.equal(completed.exams[0].readiness.coverage, 1);
      assert.equal(completed.exams[0].readiness.percent, (await readinessOf(student, biology.id)).percent);

      await api.delete(`/api/exams/${history.id}`).set(student.headers).expect(204);
      const removed = dataOf(await stream.next());
      assert.deepEqual(removed.removed_exam_ids, [history.id]);
      assert.deepEqual(removed.exams, []);
    });

    it('sends nothing for a change that moves no readiness, and nothing of other students', async () => {
      const { student, biology } = await preparedStudent();
      const other = await prepare(await newStudent(app));
      const stream = await open(student);
      dataOf(await stream.next());
      await review(other.student, other.cards[0].id);
      await api.patch(`/api/exams/${biology.id}`).set(student.headers).send({ notes: 'Bring a calculator' }).expect(200);
      await assert.rejects(stream.next(500), /no event within/);
    });

    it('resumes with Last-Event-ID: the moves missed meanwhile, each exam in its latest state, and no snapshot', async () => {
      const { student, cards, task, biology } = await preparedStudent();
      const first = await open(student);
      const snapshot = await first.next();
      first.close();

      await review(student, cards[0].id);
      await api.patch(`/api/tasks/${task.id}`).set(student.headers).send({ status: 'completed' }).expect(200);

      const again = await open(student, { 'Last-Event-ID': snapshot.id! });
      const missed = [await again.next(), await again.next()];
      assert.deepEqual(missed.map((e) => e.event), ['readiness', 'readiness']);
      assert.ok(Number(missed[0]!.id) > Number(snapshot.id) && Number(missed[1]!.id) > Number(missed[0]!.id), 'in order, after the id sent');
      const latest = dataOf(missed[1]!).exams.find((e: any) => e.exam_id === biology.id);
      assert.deepEqual(latest.readiness.details, (await readinessOf(student, biology.id)).details);
      // The first move also moved History (a new study day); History did not move since, so it is not repeated.
      assert.equal(dataOf(missed[0]!).exams.length, 1, 'Biology moved again later and is sent once, in its latest move');

      // ...and the stream goes on live.
      await review(student, cards[1].id);
      const live = await again.next();
      assert.equal(live.event, 'readiness');
      assert.ok(Number(live.id) > Number(missed[1]!.id));

      const upToDate = await open(student, { 'Last-Event-ID': live.id! });
      await assert.rejects(upToDate.next(500), /no event within/, 'nothing missed, nothing sent');
    });

    it('answers a Last-Event-ID it never sent with a snapshot marked missed', async () => {
      const { student } = await preparedStudent();
      const stream = await open(student, { 'Last-Event-ID': '999999999' });
      const first = await stream.next();
      assert.equal(first.event, 'snapshot');
      assert.equal(dataOf(first).missed, true);
    });

    it('cleans up when the client disconnects: the handler returns and the stream is no longer counted', async () => {
      const { student } = await preparedStudent();
      const stream = await open(student);
      await stream.next();
      assert.equal(lifecycle.running, 1, 'the stream holds the stop while it is open');
      stream.close();
      await until(() => lifecycle.running === 0, 'the handler returned after the disconnect');
    });

    it('ends every stream with service_restarting when the process stops, and the handler returns', async () => {
      const { student } = await preparedStudent();
      const stream = await open(student);
      const snapshot = await stream.next();
      lifecycle.endStreams();
      const last = await stream.next();
      assert.equal(last.event, 'error');
      assert.equal(dataOf(last).code, 'service_restarting');
      assert.equal(last.id, snapshot.id, 'the last id stays the one to resume from');
      await stream.ended;
      await until(() => lifecycle.running === 0, 'the handler returned');
    });

    it('refuses a Last-Event-ID that is not one of its ids (400), and a credential without exams:read (403)', async () => {
      const { student } = await preparedStudent();
      const bad = await api.get(PATH).set(student.headers).set('Last-Event-ID', 'last-event').expect(400);
      assert.equal(bad.body.errors[0].path, 'header.last-event-id');
      const narrow = await newStudent(app, { scopes: ['tasks:read'] });
      const refused = await api.get(PATH).set(narrow.headers).expect(403);
      assert.equal(refused.body.code, 'insufficient_scope');
    });
  });

  it('sends heartbeat comments at the configured interval', async () => {
    await serve({ heartbeatMs: 100, maxDurationMs: 60_000 });
    const { student } = await preparedStudent();
    const stream = await open(student);
    await stream.next();
    await until(() => stream.comments >= 3, 'three heartbeats');
  });

  it('ends a stream after its longest duration with max_duration_reached', async () => {
    await serve({ heartbeatMs: 15_000, maxDurationMs: 300 });
    const { student } = await preparedStudent();
    const stream = await open(student);
    assert.equal((await stream.next()).event, 'snapshot');
    const last = await stream.next();
    assert.equal(dataOf(last).code, 'max_duration_reached');
    await stream.ended;
  });

  it('answers within the contract through the contract client (status, headers), and HEAD without a body', async () => {
    await serve({ heartbeatMs: 15_000, maxDurationMs: 100 });
    const { student } = await preparedStudent();
    const res = await api.get(PATH).set(student.headers).buffer(true).parse((r, done) => {
      let text = '';
      r.on('data', (chunk: Buffer) => (text += chunk));
      r.on('end', () => done(null, text));
    });
    assert.equal(res.status, 200);
    assert.match(String(res.headers['cache-control']), /no-cache/);
    const head = await api.head(PATH).set(student.headers).expect(200);
    assert.equal(head.text, undefined);
  });

  it('on PostgreSQL, makes up for the moves sent while its listening connection was lost', async function () {
    if (!testDatabase().url) this.skip(); // PGlite listens in process: nothing to lose
    await serve();
    const { student, cards, biology } = await preparedStudent();
    const stream = await open(student);
    await stream.next();
    const { db } = testDatabase();
    const listeners = sql<{ pid: number }>`select pid from pg_stat_activity where application_name = ${LISTENER_APPLICATION_NAME} and datname = current_database()`;
    const before = (await listeners.execute(db)).rows.map((row) => row.pid);
    assert.ok(before.length > 0, 'a connection listens');
    await sql`select pg_terminate_backend(pid) from pg_stat_activity where pid = any(${before})`.execute(db);
    await until(async () => !(await listeners.execute(db)).rows.some((row) => before.includes(row.pid)), 'the listening connection is gone');
    // Made while nothing listens (the listener waits at least half a second before it reconnects): its notification
    // is lost, and the reconnected listener tells the stream to read again.
    await review(student, cards[0].id);
    const moved = await stream.next(15_000);
    assert.equal(moved.event, 'readiness');
    assert.equal(dataOf(moved).exams.find((e: any) => e.exam_id === biology.id).readiness.details.cards_reviewed, 1);
    // The new connection carries the next move as it happens.
    await review(student, cards[1].id);
    assert.equal(dataOf(await stream.next()).exams[0].readiness.details.cards_reviewed, 2);
  });
});

function inDays(days: number): string {
  return new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
}

async function until(condition: () => boolean | Promise<boolean>, what: string, withinMs = 5_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
