// GET /api/rooms/{room_id}/stream over a real connection: the snapshot, presence as members' streams open and close,
// the timer's moves as every member sees them, resumption with Last-Event-ID, the end when the student leaves, and
// the refusals (404 for a room the student is not in, the account's stream bound). Every event's data is checked
// against its schema in the spec (`x-sse-events`).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { sql } from 'kysely';
import { MAX_OPEN_STREAMS } from '../../../domain/bounds.ts';
import type { StreamSettings } from '../../../services/streams/stream-settings.ts';
import { contractClient } from '../../support/contract.ts';
import { newStudent, type Student } from '../../support/general-app.ts';
import { listen, type Listening } from '../../support/listening.ts';
import { deleteWithRooms } from '../../support/query-fixture.ts';
import { buildApp } from '../../support/partner-app.ts';
import { testDatabase } from '../../support/shared-database.ts';
import { openEventStream, type LiveEventStream, type ServerSentEvent } from '../../support/sse.ts';

const TEMPLATE = '/api/rooms/{room_id}/stream';
const spec = JSON.parse(readFileSync(new URL('../../../generated/general/openapi.json', import.meta.url), 'utf8'));
const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats.default(ajv);
ajv.addSchema(spec, 'general');
const eventSchemas = Object.fromEntries(
  Object.keys(spec.paths[TEMPLATE].get.responses['200']['x-sse-events']).map((name) => [
    name,
    ajv.compile({
      $ref: `general#/paths/${TEMPLATE.replace(/\//g, '~1').replace(/[{}]/g, (c) => encodeURIComponent(c))}/get/responses/200/x-sse-events/${name}`,
    }),
  ]),
);

function dataOf(event: ServerSentEvent, name: string): any {
  assert.equal(event.event, name, `expected ${name}, got ${event.event}: ${event.data}`);
  const validate = eventSchemas[event.event]!;
  const data = JSON.parse(event.data);
  assert.ok(validate(data), `${event.event} data breaks its schema: ${ajv.errorsText(validate.errors)}`);
  assert.match(event.id ?? '', /^\d+$/);
  return data;
}

const LIVE: StreamSettings = { heartbeatMs: 15_000, maxDurationMs: 60_000 };

describe('streamRoom', () => {
  let server: Listening;
  let api: ReturnType<typeof contractClient>;
  let app: Awaited<ReturnType<typeof buildApp>>;
  const streams: LiveEventStream[] = [];

  async function serve(settings: StreamSettings = LIVE) {
    app = await buildApp({ streamSettings: settings });
    api = contractClient(app);
    server = await listen(app);
  }
  const path = (roomId: string) => `/api/rooms/${roomId}/stream`;
  async function open(student: Student, roomId: string, headers: Record<string, string> = {}) {
    const stream = await openEventStream(server.baseUrl + path(roomId), { ...student.headers, ...headers });
    streams.push(stream);
    assert.equal(stream.status, 200);
    return stream;
  }
  async function roomOf(owner: Student, others: Student[] = []) {
    const room = (await api.post('/api/rooms').set(owner.headers).send({ title: 'Live room' }).expect(201)).body;
    const code = (await api.post(`/api/rooms/${room.id}/join-code`).set(owner.headers).expect(201)).body.code;
    for (const other of others) await api.post('/api/rooms/join').set(other.headers).send({ code }).expect(200);
    return room.id as string;
  }
  const timer = (student: Student, roomId: string, body: Record<string, unknown>) =>
    api.post(`/api/rooms/${roomId}/timer`).set(student.headers).send(body).expect(200);

  afterEach(async () => {
    streams.splice(0).forEach((stream) => stream.close());
    await server?.close();
  });

  describe('on a live connection', () => {
    beforeEach(() => serve());

    it('every member sees the same presence and timer, in order', async () => {
      const [alice, bob] = [await newStudent(app), await newStudent(app)];
      const room = await roomOf(alice, [bob]);
      const onAlice = await open(alice, room);
      const first = dataOf(await onAlice.next(), 'snapshot');
      assert.deepEqual(first, {
        at: first.at,
        missed: false,
        timer: null,
        present: [{ nickname: alice.nickname, first_name: 'Test' }],
      });

      const onBob = await open(bob, room);
      const bobSnapshot = dataOf(await onBob.next(), 'snapshot');
      assert.deepEqual(
        bobSnapshot.present.map((m: { nickname: string }) => m.nickname).sort(),
        [alice.nickname, bob.nickname].sort(),
      );
      assert.deepEqual(dataOf(await onAlice.next(), 'presence'), {
        event: 'joined',
        member: { nickname: bob.nickname, first_name: 'Test' },
      });
      const members = (await api.get(`/api/rooms/${room}/members`).set(alice.headers).expect(200)).body.data;
      assert.deepEqual(
        members.map((m: { present: boolean }) => m.present),
        [true, true],
      );

      const started = (await timer(alice, room, { action: 'start', duration_minutes: 25 })).body;
      const [toAlice, toBob] = [await onAlice.next(), await onBob.next()];
      assert.deepEqual(dataOf(toAlice, 'timer'), { event: 'started', timer: started });
      assert.deepEqual(dataOf(toBob, 'timer'), { event: 'started', timer: started });
      assert.equal(toAlice.id, toBob.id, 'one move, one id, for every member');
      await timer(bob, room, { action: 'pause' });
      assert.equal(dataOf(await onAlice.next(), 'timer').event, 'paused');
      assert.equal(dataOf(await onBob.next(), 'timer').event, 'paused');

      onBob.close();
      assert.deepEqual(dataOf(await onAlice.next(), 'presence'), {
        event: 'left',
        member: { nickname: bob.nickname, first_name: 'Test' },
      });
      const after = (await api.get(`/api/rooms/${room}/members`).set(alice.headers).expect(200)).body.data;
      assert.deepEqual(
        after.map((m: { nickname: string; present: boolean }) => [m.nickname, m.present]),
        [
          [alice.nickname, true],
          [bob.nickname, false],
        ],
      );
    });

    it('a session that ran out reaches every stream as finished', async () => {
      const [alice, bob] = [await newStudent(app), await newStudent(app)];
      const room = await roomOf(alice, [bob]);
      const onBob = await open(bob, room);
      dataOf(await onBob.next(), 'snapshot');
      const started = (await timer(alice, room, { action: 'start', duration_minutes: 5 })).body;
      dataOf(await onBob.next(), 'timer');
      await testDatabase()
        .db.updateTable('study_room_sessions')
        .set({ started_at: sql`started_at - interval '6 minutes'` })
        .where('id', '=', started.session_id)
        .execute();
      await api.get(`/api/rooms/${room}`).set(alice.headers).expect(200);
      const finished = dataOf(await onBob.next(), 'timer');
      assert.equal(finished.event, 'finished');
      assert.equal(finished.timer.status, 'finished');
    });

    it('resumes after Last-Event-ID with the moves missed; an id it cannot resume from gets a snapshot with missed: true', async () => {
      const [alice, bob] = [await newStudent(app), await newStudent(app)];
      const room = await roomOf(alice, [bob]);
      const onBob = await open(bob, room);
      const snapshot = await onBob.next();
      onBob.close();
      await timer(alice, room, { action: 'start', duration_minutes: 25 });
      await timer(alice, room, { action: 'stop' });
      const again = await open(bob, room, { 'Last-Event-ID': snapshot.id! });
      const missed = [await again.next(), await again.next(), await again.next(), await again.next()];
      // Bob's own stream closing (whenever the server saw the connection go) and reopening are moves too; the
      // timer's two come in order.
      const kinds = missed.map((e) => `${e.event} ${JSON.parse(e.data).event}`);
      assert.deepEqual(
        kinds.filter((k) => k.startsWith('timer')),
        ['timer started', 'timer stopped'],
      );
      assert.deepEqual(
        kinds.filter((k) => k.startsWith('presence')),
        ['presence left', 'presence joined'],
      );
      assert.equal(kinds.at(-1), 'presence joined');
      missed.forEach((e) => dataOf(e, e.event));
      const fresh = await open(bob, room, { 'Last-Event-ID': '999999999' });
      assert.equal(dataOf(await fresh.next(), 'snapshot').missed, true);
    });

    it("resumes after moves of other rooms: only the room's own moves count towards the replay's bound", async () => {
      const [alice, bob, carol] = [await newStudent(app), await newStudent(app), await newStudent(app)];
      const room = await roomOf(alice, [bob]);
      const elsewhere = await roomOf(carol);
      const onBob = await open(bob, room);
      const snapshot = await onBob.next();
      onBob.close();
      // More moves of another room than a replay carries, numbered after Bob's last id.
      await sql`insert into study_room_moves (room_id, kind, data)
        select ${elsewhere}, 'timer', '{}'::jsonb from generate_series(1, 102)`.execute(testDatabase().db);
      await timer(alice, room, { action: 'start', duration_minutes: 25 });
      await timer(alice, room, { action: 'stop' });
      const again = await open(bob, room, { 'Last-Event-ID': snapshot.id! });
      const first = await again.next();
      assert.notEqual(first.event, 'snapshot', `a replay, not a snapshot: ${first.data}`);
      const replayed = [first, await again.next(), await again.next(), await again.next()];
      const kinds = replayed.map((e) => `${e.event} ${JSON.parse(e.data).event}`);
      assert.deepEqual(
        kinds.filter((k) => k.startsWith('timer')),
        ['timer started', 'timer stopped'],
      );
    });

    for (const how of ['leaves the room', 'deletes the account'] as const) {
      it(`the other members' streams see presence left when a member with a stream open ${how}`, async () => {
        const [alice, bob] = [await newStudent(app), await newStudent(app)];
        const room = await roomOf(alice, [bob]);
        const onAlice = await open(alice, room);
        dataOf(await onAlice.next(), 'snapshot');
        await open(bob, room);
        const member = { nickname: bob.nickname, first_name: 'Test' };
        assert.deepEqual(dataOf(await onAlice.next(), 'presence'), { event: 'joined', member });
        if (how === 'leaves the room') await api.delete(`/api/rooms/${room}/membership`).set(bob.headers).expect(204);
        else await deleteWithRooms(testDatabase().db, bob.id);
        // A move after it: without the `left`, this is what Alice would see next.
        await timer(alice, room, { action: 'start', duration_minutes: 25 });
        assert.deepEqual(dataOf(await onAlice.next(), 'presence'), { event: 'left', member });
        assert.equal(dataOf(await onAlice.next(), 'timer').event, 'started');
      });
    }

    it('ends with room_left when the student leaves the room', async () => {
      const [alice, bob] = [await newStudent(app), await newStudent(app)];
      const room = await roomOf(alice, [bob]);
      const onBob = await open(bob, room);
      dataOf(await onBob.next(), 'snapshot');
      await api.delete(`/api/rooms/${room}/membership`).set(bob.headers).expect(204);
      let last = await onBob.next();
      while (last.event !== 'error') last = await onBob.next();
      assert.equal(dataOf(last, 'error').code, 'room_left');
    });

    it('refuses a room the student is not in (404, as an unknown one), no credential, a narrow one, a bad id; counts in the stream bound', async () => {
      const [alice, bob, narrow] = [
        await newStudent(app),
        await newStudent(app),
        await newStudent(app, { scopes: ['tasks:read'] }),
      ];
      const room = await roomOf(alice);
      const others = await api.get(path(room)).set(bob.headers).expect(404);
      const unknown = await api.get(path('9f0e8d7c-6b5a-4c3d-8e2f-1a0b9c8d7e6f')).set(bob.headers).expect(404);
      assert.equal(others.body.detail, unknown.body.detail);
      await api.get(path(room)).expect(401);
      assert.equal((await api.get(path(room)).set(narrow.headers).expect(403)).body.code, 'insufficient_scope');
      await api.get(path('not-a-uuid')).set(alice.headers).expect(400);
      for (let i = 0; i < MAX_OPEN_STREAMS; i++) await open(alice, room);
      const refused = await api.get(path(room)).set(alice.headers).expect(429);
      assert.equal(refused.body.code, 'too_many_streams');
    });
  });

  it('ends at its longest time, so that a client reading to the end gets the whole response', async () => {
    await serve({ heartbeatMs: 15_000, maxDurationMs: 300 });
    const alice = await newStudent(app);
    const room = await roomOf(alice);
    const res = await api.get(path(room)).set(alice.headers).expect(200);
    assert.match(res.text, /event:snapshot/);
    assert.match(res.text, /max_duration_reached/);
  });
});
