// GET /api/exams/readiness/stream, read live with a real SSE parser (eventsource-parser) over a real connection:
// the snapshot, moves in order with only the exams that moved, heartbeats, resumption with Last-Event-ID,
// disconnects, the stream's end on a stop and after its longest time, and a lost listening connection on
// PostgreSQL. Every event's data is checked against its schema in the spec (`x-sse-events`).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { newStudent, type Student } from '../../support/general-app.ts';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { sql, TableNode, type KyselyPlugin, type RootOperationNode } from 'kysely';
import { pino } from 'pino';
import { connect, type Db } from '../../../db/connect.ts';
import { LISTENER_APPLICATION_NAME, notificationsFor, type Notifications } from '../../../db/notifications.ts';
import { LEASE_TTL_MS, MAX_OPEN_STREAMS } from '../../../domain/bounds.ts';
import { MAX_REPLAYED_MOVES } from '../../../services/readiness/readiness-stream.ts';
import { createLifecycle, type LifecycleControl } from '../../../server/process/lifecycle.ts';
import type { StreamSettings } from '../../../services/streams/stream-settings.ts';
import { contractClient } from '../../support/contract.ts';
import { listen, type Listening } from '../../support/listening.ts';
import { buildApp } from '../../support/partner-app.ts';
import { testDatabase } from '../../support/shared-database.ts';
import { openEventStream, type LiveEventStream, type ServerSentEvent } from '../../support/sse.ts';
import { registerTestClient, signIn } from '../../support/oauth-flow.ts';
import { leasesOfGrants } from '../../../db/queries/account-leases.ts';

const PATH = '/api/exams/readiness/stream';
const spec = JSON.parse(readFileSync(new URL('../../../generated/general/openapi.json', import.meta.url), 'utf8'));
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

/**
 * How soon a stream hears of a change made through another process: by the commit's notification. Without it, the
 * renewal of the stream's lease (every third of LEASE_TTL_MS) would find the lease gone and end the stream otherwise
 * (service_unavailable); a third of that period tells the two apart on a loaded machine.
 */
const TOLD_WITHIN_MS = LEASE_TTL_MS / 3 / 3;

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
    for (const front of ['Mitochondria?', 'Ribosome?'])
      cards.push(
        (
          await api
            .post(`/api/flashcards/decks/${deck.id}/cards`)
            .set(h)
            .send({ front, back: 'An organelle' })
            .expect(201)
        ).body,
      );
    const task = (
      await api
        .post('/api/tasks')
        .set(h)
        .send({ title: 'Read chapter 3', due_at: inDays(2) + 'T12:00:00Z', course: 'Biology' })
        .expect(201)
    ).body;
    const biology = (
      await api
        .post('/api/exams')
        .set(h)
        .send({ subject: 'Biology', exam_date: inDays(10), deck_ids: [deck.id], task_ids: [task.id] })
        .expect(201)
    ).body;
    const history = (
      await api
        .post('/api/exams')
        .set(h)
        .send({ subject: 'History', exam_date: inDays(20) })
        .expect(201)
    ).body;
    return { student, deck, cards, task, biology, history };
  }
  const review = (student: Student, cardId: string) =>
    api.post(`/api/flashcards/cards/${cardId}/reviews`).set(student.headers).send({ grade: 5 }).expect(201);
  const readinessOf = async (student: Student, examId: string) =>
    (await api.get(`/api/exams/${examId}`).set(student.headers).expect(200)).body.readiness;

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
      assert.deepEqual(
        snapshot.exams.map((e: any) => e.subject),
        ['Biology', 'History'],
      );
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
      assert.deepEqual(
        dataOf(secondReview).exams.map((e: any) => e.exam_id),
        [biology.id],
      );

      await api.patch(`/api/tasks/${task.id}`).set(student.headers).send({ status: 'completed' }).expect(200);
      const completed = dataOf(await stream.next());
      assert.deepEqual(
        completed.exams.map((e: any) => e.exam_id),
        [biology.id],
      );
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
      await api
        .patch(`/api/exams/${biology.id}`)
        .set(student.headers)
        .send({ notes: 'Bring a calculator' })
        .expect(200);
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
      assert.deepEqual(
        missed.map((e) => e.event),
        ['readiness', 'readiness'],
      );
      assert.ok(
        Number(missed[0]!.id) > Number(snapshot.id) && Number(missed[1]!.id) > Number(missed[0]!.id),
        'in order, after the id sent',
      );
      const latest = dataOf(missed[1]!).exams.find((e: any) => e.exam_id === biology.id);
      assert.deepEqual(latest.readiness.details, (await readinessOf(student, biology.id)).details);
      // The first move also moved History (a new study day); History did not move since, so it is not repeated.
      assert.equal(
        dataOf(missed[0]!).exams.length,
        1,
        'Biology moved again later and is sent once, in its latest move',
      );

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
    const res = await api
      .get(PATH)
      .set(student.headers)
      .buffer(true)
      .parse((r, done) => {
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
    const listeners = sql<{
      pid: number;
    }>`select pid from pg_stat_activity where application_name = ${LISTENER_APPLICATION_NAME} and datname = current_database()`;
    const before = (await listeners.execute(db)).rows.map((row) => row.pid);
    assert.ok(before.length > 0, 'a connection listens');
    await sql`select pg_terminate_backend(pid) from pg_stat_activity where pid = any(${before})`.execute(db);
    await until(
      async () => !(await listeners.execute(db)).rows.some((row) => before.includes(row.pid)),
      'the listening connection is gone',
    );
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

describe('streamExamReadiness: fair share', () => {
  const MAX = MAX_OPEN_STREAMS;
  const streams: LiveEventStream[] = [];
  const servers: Listening[] = [];
  const opened: Notifications[] = [];
  const pools: Db[] = [];
  afterEach(async () => {
    streams.splice(0).forEach((stream) => stream.close());
    await Promise.all(servers.splice(0).map((server) => server.close()));
    await Promise.all(opened.splice(0).map((n) => n.close()));
    await Promise.all(pools.splice(0).map((db) => db.destroy()));
  });

  /**
   * A process's view: an app listening on a port. `own`: a notification path of its own (and on PostgreSQL a pool of
   * its own), so that nothing but the commit's NOTIFY tells it about a change made through another; `db`: a database
   * handle of the test's (one that counts queries, say).
   */
  async function process(options: { own?: boolean; db?: Db } = {}) {
    const { url } = testDatabase();
    let db = options.db ?? testDatabase().db;
    let notifications: Notifications | undefined;
    if (options.own) {
      if (url) pools.push((db = connect({ databaseUrl: url })));
      opened.push((notifications = notificationsFor(db, url, { logger: pino({ level: 'silent' }), timeoutMs: 5_000 })));
    }
    const app = await buildApp({ streamSettings: LIVE, db, ...(notifications ? { notifications } : {}) });
    const server = await listen(app);
    servers.push(server);
    const open = async (headers: Record<string, string>, extra: Record<string, string> = {}) => {
      const stream = await openEventStream(server.baseUrl + PATH, { ...headers, ...extra });
      streams.push(stream);
      assert.equal(stream.status, 200);
      return stream;
    };
    return { app, api: contractClient(app), server, open };
  }

  async function studentWithExam(p: Awaited<ReturnType<typeof process>>) {
    const student = await newStudent(p.app);
    const deck = (await p.api.post('/api/flashcards/decks').set(student.headers).send({ title: 'Cells' }).expect(201))
      .body;
    const cards = [];
    for (const front of ['Mitochondria?', 'Ribosome?'])
      cards.push(
        (
          await p.api
            .post(`/api/flashcards/decks/${deck.id}/cards`)
            .set(student.headers)
            .send({ front, back: 'An organelle' })
            .expect(201)
        ).body,
      );
    await p.api
      .post('/api/exams')
      .set(student.headers)
      .send({ subject: 'Biology', exam_date: inDays(10), deck_ids: [deck.id] })
      .expect(201);
    return { student, cards };
  }
  const personalKey = async (p: Awaited<ReturnType<typeof process>>, student: Student) =>
    (
      await p.api
        .post('/api/users/me/api-keys')
        .set(student.headers)
        .send({ name: 'dashboard', scopes: ['exams:read'] })
        .expect(201)
    ).body as { id: string; key: string };
  const openRows = async (userId: string) =>
    Number(
      (
        await sql<{
          n: string;
        }>`select count(*) as n from account_leases where user_id = ${userId} and expires_at > statement_timestamp()`.execute(
          testDatabase().db,
        )
      ).rows[0]!.n,
    );

  it(`bounds the streams an account holds open at ${MAX}, counted per account over every key and process, and frees a place when a stream ends`, async () => {
    const [one, two] = [await process(), await process({ own: true })];
    const { student } = await studentWithExam(one);
    const key = await personalKey(one, student);
    const viaKey = { 'X-Service-API-Key': key.key };
    // Half through the access token on one process, half through a personal key on the other.
    for (let i = 0; i < MAX; i++)
      await (i % 2 === 0 ? one.open(student.headers) : two.open(viaKey)).then((stream) => stream.next());
    assert.equal(await openRows(student.id), MAX);

    for (const [p, headers] of [
      [one, student.headers],
      [two, student.headers],
      [one, viaKey],
    ] as const) {
      const refused = await p.api.get(PATH).set(headers).expect(429);
      assert.equal(refused.body.code, 'too_many_streams');
      const retryAfter = Number(refused.headers['retry-after']);
      assert.ok(
        retryAfter >= 1 && retryAfter <= LEASE_TTL_MS / 1000,
        `Retry-After ${retryAfter}: until the earliest lease may lapse`,
      );
    }
    // Another account is not affected.
    const other = await newStudent(one.app);
    assert.equal((await (await one.open(other.headers)).next()).event, 'snapshot');

    // The client leaves one stream: its place is free again, in every process.
    streams[0]!.close();
    await until(async () => (await openRows(student.id)) === MAX - 1, 'the place of the stream that ended is freed');
    assert.equal((await (await two.open(student.headers)).next()).event, 'snapshot');
    await one.api.get(PATH).set(viaKey).expect(429);
  });

  it('does not count the streams of a process that died once their leases lapse', async () => {
    const p = await process();
    const { student } = await studentWithExam(p);
    const rows = (expires: string) =>
      Array.from(
        { length: MAX },
        () => sql`(${student.id}::uuid, 'stream', 'readiness', statement_timestamp() + ${expires}::interval)`,
      );
    // A dead process left MAX streams whose leases have lapsed: they do not count.
    await sql`insert into account_leases (user_id, kind, grp, expires_at) values ${sql.join(rows('-1 second'))}`.execute(
      testDatabase().db,
    );
    assert.equal((await (await p.open(student.headers)).next()).event, 'snapshot');
    assert.equal(await openRows(student.id), 1);
    // Leases still running count until they lapse, which Retry-After says.
    await sql`insert into account_leases (user_id, kind, grp, expires_at) values ${sql.join(rows('20 seconds'))}`.execute(
      testDatabase().db,
    );
    const refused = await p.api.get(PATH).set(student.headers).expect(429);
    assert.ok(Number(refused.headers['retry-after']) <= 20);
  });

  it("reads each move once per process, whatever the number of the student's streams", async () => {
    const reads = movesReadCounter();
    const p = await process({ db: testDatabase().db.withPlugin(reads.plugin) });
    const { student, cards } = await studentWithExam(p);
    const own = [];
    for (let i = 0; i < MAX; i++) own.push(await p.open(student.headers));
    for (const stream of own) assert.equal((await stream.next()).event, 'snapshot');
    // Each stream that joins reads what moved since its snapshot once; then everything is quiet.
    await until(() => reads.settled(), 'the joining reads are done');

    for (const [i, card] of cards.entries()) {
      const before = reads.count;
      await p.api.post(`/api/flashcards/cards/${card.id}/reviews`).set(student.headers).send({ grade: 5 }).expect(201);
      const moved = await Promise.all(own.map((stream) => stream.next()));
      assert.ok(
        moved.every((event) => event.event === 'readiness' && event.id === moved[0]!.id),
        `move ${i + 1} reached every stream`,
      );
      await until(() => reads.settled(), 'the reads are done');
      assert.equal(
        reads.count - before,
        1,
        `move ${i + 1}: one read for ${MAX} streams of one student (was ${reads.count - before})`,
      );
    }
  });

  it(`answers a Last-Event-ID more than ${MAX_REPLAYED_MOVES} moves behind with a snapshot, not the whole history`, async () => {
    const p = await process();
    const { student, cards } = await studentWithExam(p);
    // A long history: the student's moves are numbered far beyond what an old client holds.
    await sql`update readiness_versions set version = version + ${MAX_REPLAYED_MOVES} where user_id = ${student.id}`.execute(
      testDatabase().db,
    );
    const first = await p.open(student.headers);
    const snapshot = await first.next();
    await p.api
      .post(`/api/flashcards/cards/${cards[0]!.id}/reviews`)
      .set(student.headers)
      .send({ grade: 5 })
      .expect(201);
    assert.equal((await first.next()).event, 'readiness');

    const fromZero = await p.open(student.headers, { 'Last-Event-ID': '0' });
    const fresh = await fromZero.next();
    assert.equal(fresh.event, 'snapshot', 'a snapshot instead of the replay of every move');
    assert.equal(dataOf(fresh).missed, true);
    assert.ok(Number(fresh.id) > MAX_REPLAYED_MOVES);
    // Within the bound, the moves missed are replayed as before.
    const recent = await p.open(student.headers, { 'Last-Event-ID': snapshot.id! });
    assert.equal((await recent.next()).event, 'readiness');
  });

  it('ends a stream with account_deleted when its account is deleted through another process', async () => {
    const [one, two] = [await process(), await process({ own: true })];
    const { student } = await studentWithExam(one);
    const key = await personalKey(one, student);
    const viaToken = await one.open(student.headers);
    const viaKey = await one.open({ 'X-Service-API-Key': key.key });
    const snapshot = await viaToken.next();
    await viaKey.next();

    await two.api.delete('/api/users/me').set(student.headers).expect(204);
    for (const stream of [viaToken, viaKey]) {
      const last = await stream.next(TOLD_WITHIN_MS);
      assert.equal(last.event, 'error');
      assert.equal(dataOf(last).code, 'account_deleted');
      assert.equal(last.id, snapshot.id);
      await stream.ended;
    }
    assert.equal(await openRows(student.id), 0);
  });

  it("ends the stream of a revoked key with credential_revoked, in another process, and only that key's", async () => {
    const [one, two] = [await process(), await process({ own: true })];
    const { student } = await studentWithExam(one);
    const [revoked, kept] = [await personalKey(one, student), await personalKey(one, student)];
    const onRevoked = await one.open({ 'X-Service-API-Key': revoked.key });
    const onKept = await one.open({ 'X-Service-API-Key': kept.key });
    const onToken = await one.open(student.headers);
    for (const stream of [onRevoked, onKept, onToken]) await stream.next();

    await two.api.delete(`/api/users/me/api-keys/${revoked.id}`).set(student.headers).expect(204);
    const last = await onRevoked.next(TOLD_WITHIN_MS);
    assert.equal(last.event, 'error');
    assert.equal(dataOf(last).code, 'credential_revoked');
    await onRevoked.ended;
    await assert.rejects(onKept.next(300), /no event within/, 'the other key keeps its stream');
    await assert.rejects(onToken.next(300), /no event within/, 'the token keeps its stream');
    await until(async () => (await openRows(student.id)) === 2, 'the revoked stream freed its place');
    await one.api.get(PATH).set({ 'X-Service-API-Key': revoked.key }).expect(401);
  });

  it("ends the streams of an app's grant with credential_revoked when the student withdraws its access, and frees their places", async () => {
    const [one, two] = [await process(), await process({ own: true })];
    const { student } = await studentWithExam(one);
    const appClient = (await registerTestClient(['exams:read'])).client_id;
    const appTokens = await signIn(one.app, {
      email: student.email,
      password: student.password,
      client_id: appClient,
      scope: 'exams:read',
    });
    const grantId = JSON.parse(Buffer.from(appTokens.access_token.split('.')[1]!, 'base64url').toString())
      .sid as string;
    const onApp = await one.open({ authorization: `Bearer ${appTokens.access_token}` });
    const onStudent = await one.open(student.headers);
    for (const stream of [onApp, onStudent]) await stream.next();
    assert.equal(await leasesOfGrants(testDatabase().db, [grantId]), 1);

    await two.api.delete(`/api/users/me/authorizations/${appClient}`).set(student.headers).expect(204);
    const last = await onApp.next(TOLD_WITHIN_MS);
    assert.equal(dataOf(last).code, 'credential_revoked');
    await onApp.ended;
    await assert.rejects(onStudent.next(300), /no event within/, "the student's own sign-in keeps its stream");
    await until(
      async () => (await leasesOfGrants(testDatabase().db, [grantId])) === 0,
      "the grant's streams freed their places",
    );
  });
});

/**
 * Counts the statements that read the moves of a student (db/queries/readiness.ts readinessMovedSince: exam_readiness,
 * ordered), the read each stream made per notification before the streams of a student were grouped.
 */
function movesReadCounter() {
  let count = 0;
  let lastCount = 0;
  let quietSince = Date.now();
  const running = new Set<unknown>();
  const isMovesRead = (node: RootOperationNode) =>
    node.kind === 'SelectQueryNode' &&
    node.orderBy !== undefined &&
    (node.from?.froms ?? []).some((from) => TableNode.is(from) && from.table.identifier.name === 'exam_readiness');
  const plugin: KyselyPlugin = {
    transformQuery({ node, queryId }) {
      if (isMovesRead(node)) {
        count++;
        running.add(queryId);
      }
      return node;
    },
    async transformResult({ result, queryId }) {
      running.delete(queryId);
      return result;
    },
  };
  return {
    plugin,
    get count() {
      return count;
    },
    /** No read running, and none started for a moment. */
    settled() {
      if (count !== lastCount || running.size > 0) {
        lastCount = count;
        quietSince = Date.now();
        return false;
      }
      return Date.now() - quietSince > 200;
    },
  };
}

function inDays(days: number): string {
  return new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
}

async function until(
  condition: () => boolean | Promise<boolean>,
  what: string,
  withinMs = LEASE_TTL_MS / 3,
): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
