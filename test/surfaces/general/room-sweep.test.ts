// The worker's sweep of the study rooms (services/rooms/sweep.ts): a focus session nobody watches is recorded as
// finished by the sweep's first pass after its planned end (its move, events, study day and xp), and a member whose
// stream's process died gets one `left` move that the other streams see; neither is doubled by a second pass, a second
// worker, the visitor's read or the stream's own close.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { pino } from 'pino';
import { addPresence, insertMove, lockRoom, roomStreamKind } from '../../../db/queries/rooms.ts';
import { endLapsedPresences, finishDueSessions, startRoomSweep } from '../../../services/rooms/sweep.ts';
import { endPresence } from '../../../services/rooms/writes.ts';
import { createLifecycle } from '../../../server/process/lifecycle.ts';
import { contractClient } from '../../support/contract.ts';
import { newStudent, type Student } from '../../support/general-app.ts';
import { listen, type Listening } from '../../support/listening.ts';
import { buildApp } from '../../support/partner-app.ts';
import { testDatabase } from '../../support/shared-database.ts';
import { openEventStream, type LiveEventStream } from '../../support/sse.ts';

describe('the study rooms sweep', () => {
  let app: Awaited<ReturnType<typeof buildApp>>;
  let api: ReturnType<typeof contractClient>;
  const db = () => testDatabase().db;

  beforeEach(async () => {
    app = await buildApp({ streamSettings: { heartbeatMs: 15_000, maxDurationMs: 60_000 } });
    api = contractClient(app);
  });

  async function roomOf(owner: Student, others: Student[]) {
    const room = (await api.post('/api/rooms').set(owner.headers).send({ title: 'Quiet room' }).expect(201)).body;
    const code = (await api.post(`/api/rooms/${room.id}/join-code`).set(owner.headers).expect(201)).body.code;
    for (const other of others) await api.post('/api/rooms/join').set(other.headers).send({ code }).expect(200);
    return room.id as string;
  }

  /** A 25-minute session of the room that ends `endsInMs` from now (its start and the memberships moved back). */
  async function sessionEndingIn(roomId: string, starter: Student, endsInMs: number) {
    const session = (
      await api
        .post(`/api/rooms/${roomId}/timer`)
        .set(starter.headers)
        .send({ action: 'start', duration_minutes: 25 })
        .expect(200)
    ).body;
    const back = sql`${25 * 60_000 - endsInMs} * interval '1 millisecond'`;
    await db()
      .updateTable('study_room_sessions')
      .set({ started_at: sql`started_at - ${back}` })
      .where('id', '=', session.session_id)
      .execute();
    await db()
      .updateTable('study_room_members')
      .set({ joined_at: sql`joined_at - interval '26 minutes'` })
      .where('room_id', '=', roomId)
      .execute();
    const row = await db()
      .selectFrom('study_room_sessions')
      .select(['id', 'started_at'])
      .where('id', '=', session.session_id)
      .executeTakeFirstOrThrow();
    return { id: row.id, plannedEnd: new Date(row.started_at.getTime() + 25 * 60_000) };
  }

  const movesOf = (roomId: string, kind: string) =>
    db()
      .selectFrom('study_room_moves')
      .select(['id', 'data'])
      .where('room_id', '=', roomId)
      .where('kind', '=', kind)
      .orderBy('id')
      .execute() as Promise<Array<{ id: string; data: any }>>;
  const finishedEvents = (studentId: string) =>
    db()
      .selectFrom('events')
      .select('data')
      .where('user_id', '=', studentId)
      .where('type', '=', 'room.session_finished')
      .execute();
  const xpOf = async (student: Student) =>
    (await api.get('/api/users/me').set(student.headers).expect(200)).body as { xp: number; streak: number };

  it("records a session nobody watches as finished by the sweep's first pass after its planned end: move, events, study day, xp", async function () {
    this.timeout(60_000);
    const [alice, bob] = [await newStudent(app), await newStudent(app)];
    const room = await roomOf(alice, [bob]);
    // Its end a little after the sweeps start: their first passes begin before it (on a loaded machine maybe not,
    // which only leaves the look before the end unchecked), their third after a pass that ended past it.
    const session = await sessionEndingIn(room, alice, 400);
    const plannedEnd = session.plannedEnd.getTime();
    const recorded = async () => (await movesOf(room, 'timer')).some((m) => m.data.event === 'finished');
    // The passes of two worker processes' sweeps at once, each seen through the lifecycle that holds it: whether the
    // session was recorded once the pass had ended, and whether the pass began after an earlier pass of its sweep had
    // ended past the planned end (so its clock read past it too). Passes, not a deadline: a loaded machine delays a
    // pass, not which pass records the session.
    const passes: Array<{ pastTheEnd: boolean; recorded: boolean }> = [];
    const sweeps = [1, 2].map(() => {
      const lifecycle = createLifecycle();
      const hold = lifecycle.hold.bind(lifecycle);
      let previousEnd = -Infinity;
      lifecycle.hold = <T>(pass: Promise<T>) =>
        hold(
          pass.then(async (result) => {
            const pastTheEnd = previousEnd >= plannedEnd;
            previousEnd = Date.now();
            passes.push({ pastTheEnd, recorded: await recorded() });
            return result;
          }),
        );
      return startRoomSweep({ db: db(), lifecycle, logger: pino({ level: 'silent' }) });
    });
    try {
      let seenAt: number | undefined;
      while (!passes.some((pass) => pass.pastTheEnd)) {
        if (seenAt === undefined && (await recorded())) seenAt = Date.now();
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // Seen before its end (a look that began and ended before it) would be a finish recorded early.
      if (seenAt !== undefined) assert.ok(seenAt >= plannedEnd, `not before its end (${seenAt - plannedEnd} ms)`);
      assert.deepEqual(
        passes.filter((pass) => pass.pastTheEnd).map((pass) => pass.recorded),
        passes.filter((pass) => pass.pastTheEnd).map(() => true),
        'recorded by the first pass of a sweep after its end, not at the next read',
      );
    } finally {
      await Promise.all(sweeps.map((sweep) => sweep.stop()));
    }
    assert.equal((await movesOf(room, 'timer')).filter((m) => m.data.event === 'finished').length, 1);
    const row = await db()
      .selectFrom('study_room_sessions')
      .select('finished_at')
      .where('id', '=', session.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.finished_at?.getTime(), session.plannedEnd.getTime());
    for (const student of [alice, bob]) {
      const events = await finishedEvents(student.id);
      assert.equal(events.length, 1);
      const [event] = events;
      assert.equal((event!.data as any).object.session_id, session.id);
      assert.equal((event!.data as any).xp_awarded, 5);
      assert.deepEqual(await xpOf(student).then(({ xp, streak }) => ({ xp, streak })), { xp: 5, streak: 1 });
    }
  });

  it('a due session is recorded once however many passes, workers and visitors come; a paused one is not due', async () => {
    const [alice, bob] = [await newStudent(app), await newStudent(app)];
    const room = await roomOf(alice, [bob]);
    const session = await sessionEndingIn(room, alice, 60_000);
    const pausedRoom = await roomOf(bob, []);
    const paused = await sessionEndingIn(pausedRoom, bob, 60_000);
    await api.post(`/api/rooms/${pausedRoom}/timer`).set(bob.headers).send({ action: 'pause' }).expect(200);

    await finishDueSessions(db(), new Date());
    assert.equal((await movesOf(room, 'timer')).filter((m) => m.data.event === 'finished').length, 0, 'not due yet');
    // The clock moves past the end through the sweep's `now`: two workers at once, then a third pass.
    const later = new Date(session.plannedEnd.getTime() + 1_000);
    await Promise.all([finishDueSessions(db(), later), finishDueSessions(db(), later)]);
    await finishDueSessions(db(), later);
    await api.get(`/api/rooms/${room}`).set(bob.headers).expect(200);

    assert.equal((await movesOf(room, 'timer')).filter((m) => m.data.event === 'finished').length, 1);
    for (const student of [alice, bob]) assert.equal((await finishedEvents(student.id)).length, 1);
    assert.equal((await xpOf(alice)).xp, 5);
    assert.equal((await xpOf(bob)).xp, 5, 'the paused session of his own room gave nothing');
    const pausedRow = await db()
      .selectFrom('study_room_sessions')
      .select('finished_at')
      .where('id', '=', paused.id)
      .executeTakeFirstOrThrow();
    assert.equal(pausedRow.finished_at, null);
  });

  describe('presence', () => {
    let server: Listening;
    const streams: LiveEventStream[] = [];
    afterEach(async () => {
      streams.splice(0).forEach((stream) => stream.close());
      await server?.close();
    });

    /** What a room stream on a process that then died leaves: its lease (lapsed, or deleted since), its presence, its `joined`. */
    async function crashedStream(roomId: string, student: Student, lease: 'lapsed' | 'deleted') {
      const streamId = randomUUID();
      if (lease === 'lapsed') {
        await db()
          .insertInto('account_leases')
          .values({
            id: streamId,
            user_id: student.id,
            kind: 'stream',
            grp: roomStreamKind(roomId),
            grant_id: null,
            key_id: null,
            expires_at: sql<Date>`statement_timestamp() - interval '1 second'`,
          })
          .execute();
      }
      await db()
        .transaction()
        .execute(async (trx) => {
          await lockRoom(trx, roomId);
          await addPresence(trx, { stream_id: streamId, room_id: roomId, user_id: student.id }, new Date());
          await insertMove(
            trx,
            roomId,
            'presence',
            { event: 'joined', member: { nickname: student.nickname, first_name: 'Test' } },
            new Date(),
          );
        });
      return streamId;
    }

    it('a lapsed presence gets exactly one `left` move, which the streams of other processes see', async () => {
      server = await listen(app);
      const [alice, bob, carol] = [await newStudent(app), await newStudent(app), await newStudent(app)];
      const room = await roomOf(alice, [bob, carol]);
      const onAlice = await openEventStream(`${server.baseUrl}/api/rooms/${room}/stream`, alice.headers);
      streams.push(onAlice);
      assert.equal((await onAlice.next()).event, 'snapshot');
      const bobStream = await crashedStream(room, bob, 'lapsed');
      await crashedStream(room, carol, 'deleted');
      for (const _ of [bob, carol]) assert.equal(JSON.parse((await onAlice.next()).data).event, 'joined');

      const now = new Date();
      await Promise.all([endLapsedPresences(db(), now), endLapsedPresences(db(), now)]);
      await endLapsedPresences(db(), now);
      // The dead stream's own close, had it come late, writes nothing more.
      await endPresence(db(), room, bobStream, now);

      const seen = [JSON.parse((await onAlice.next()).data), JSON.parse((await onAlice.next()).data)];
      assert.deepEqual(
        seen.map((m) => [m.event, m.member.nickname]).sort(),
        [
          ['left', bob.nickname],
          ['left', carol.nickname],
        ].sort(),
      );
      await assert.rejects(onAlice.next(300), 'nothing more reaches the stream');
      const left = (await movesOf(room, 'presence')).filter((m) => m.data.event === 'left');
      assert.deepEqual(left.map((m) => m.data.member.nickname).sort(), [bob.nickname, carol.nickname].sort());
      const presences = await db()
        .selectFrom('study_room_presences')
        .select('user_id')
        .where('room_id', '=', room)
        .execute();
      assert.deepEqual(
        presences.map((p) => p.user_id),
        [alice.id],
        "alice's live stream is still present",
      );
    });
  });
});
