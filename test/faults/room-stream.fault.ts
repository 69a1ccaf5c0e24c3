// A study room across two real server processes on one PostgreSQL database: two students, each with the room's
// stream open on a different process, see the same presence and the same timer as it changes, which
// a third request makes through either process (NOTIFY on commit, each process's LISTEN connection); and when one
// process is killed, the other's streams see its members leave once their leases lapse (the worker's sweep).
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { LEASE_TTL_MS } from '../../domain/bounds.ts';
import { insertAccount } from '../../db/queries/profile.ts';
import { insertPersonalKey } from '../../db/queries/personal-api-keys.ts';
import { insertWithFreshKey } from '../../server/auth/api-keys.ts';
import { hashPassword } from '../../server/auth/passwords.ts';
import { ALL_SCOPES } from '../../server/auth/scopes.ts';
import { PRESENCE_SWEEP_EVERY_MS } from '../../services/rooms/sweep.ts';
import { openEventStream, type LiveEventStream } from '../support/sse.ts';
import { startServerProcess, type ServerProcess } from '../support/server-process.ts';
import { faultDatabase, requiredEnv, type FaultDatabase } from './support/fixture.ts';

// A change reaches the other process's stream in milliseconds (the run prints how many); the deadline is generous
// for a machine doing twice its work, so that a loaded CI host cannot fail a path that works.
const EVENT_WITHIN_MS = 10_000;

describe('a study room across two processes', function () {
  this.timeout(90_000);
  const redisUrl = requiredEnv('REDIS_URL');
  let database: FaultDatabase;
  let bobId: string;
  let bobKey: string;
  const processes: ServerProcess[] = [];
  const streams: LiveEventStream[] = [];

  before(async () => {
    database = await faultDatabase('sc_fault_rooms');
    const bob = await insertAccount(database.db, {
      email: 'bob@example.com',
      nickname: 'bob_rooms',
      first_name: 'Bob',
      time_zone: 'UTC',
      country_code: null,
      password_hash: await hashPassword('not-used-here'),
    });
    bobId = bob.id;
    bobKey = (
      await insertWithFreshKey(({ prefix, hash }) =>
        insertPersonalKey(database.db, {
          user_id: bob.id,
          prefix,
          key_hash: hash,
          name: 'fault suite',
          scopes: [...ALL_SCOPES],
        }),
      )
    ).key;
  });
  after(async () => {
    streams.forEach((stream) => stream.close());
    for (const server of processes) if (server.child.exitCode === null) server.child.kill('SIGKILL');
    await database?.drop();
  });

  const start = () => {
    const server = startServerProcess({
      DATABASE_URL: database.url,
      REDIS_URL: redisUrl,
      SHUTDOWN_DRAIN_SECONDS: '0',
      SHUTDOWN_GRACE_SECONDS: '10',
    });
    processes.push(server);
    return server;
  };
  async function call(base: string, key: string, path: string, body?: unknown) {
    const res = await fetch(base + path, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { 'X-Service-API-Key': key, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(5_000),
    });
    assert.ok(res.ok, `${path}: ${res.status} ${await res.clone().text()}`);
    return (await res.json()) as any;
  }
  async function open(base: string, key: string, roomId: string) {
    const stream = await openEventStream(`${base}/api/rooms/${roomId}/stream`, { 'X-Service-API-Key': key });
    streams.push(stream);
    assert.equal(stream.status, 200);
    return stream;
  }

  it('two students on two processes see the same presence and timer', async () => {
    const [a, b] = [start(), start()];
    const [baseA, baseB] = await Promise.all([a.listening, b.listening]);
    const alice = database.studentKey;
    const room = await call(baseA, alice, '/api/rooms', { title: 'Across processes' });
    const { code } = await call(baseA, alice, `/api/rooms/${room.id}/join-code`, {});
    await call(baseB, bobKey, '/api/rooms/join', { code });

    const onA = await open(baseA, alice, room.id);
    assert.equal((await onA.next()).event, 'snapshot');
    let sentAt = performance.now();
    const onB = await open(baseB, bobKey, room.id);
    const bobSnapshot = JSON.parse((await onB.next()).data);
    assert.deepEqual(bobSnapshot.present.map((m: { nickname: string }) => m.nickname).sort(), [
      'bob_rooms',
      'demo_student',
    ]);
    const joined = await onA.next(EVENT_WITHIN_MS);
    const presenceMs = performance.now() - sentAt;
    assert.equal(joined.event, 'presence');
    assert.deepEqual(JSON.parse(joined.data), {
      event: 'joined',
      member: { nickname: 'bob_rooms', first_name: 'Bob' },
    });

    // Bob starts the timer through process B; Alice, on A, sees the same session.
    sentAt = performance.now();
    const started = await call(baseB, bobKey, `/api/rooms/${room.id}/timer`, { action: 'start', duration_minutes: 25 });
    const [onAliceA, onBobB] = await Promise.all([onA.next(EVENT_WITHIN_MS), onB.next(EVENT_WITHIN_MS)]);
    const timerMs = performance.now() - sentAt;
    assert.deepEqual(JSON.parse(onAliceA.data), { event: 'started', timer: started });
    assert.deepEqual(JSON.parse(onBobB.data), { event: 'started', timer: started });
    assert.equal(onAliceA.id, onBobB.id);

    // Alice pauses through A; Bob, on B, sees it.
    await call(baseA, alice, `/api/rooms/${room.id}/timer`, { action: 'pause' });
    const paused = await onB.next(EVENT_WITHIN_MS);
    assert.equal(JSON.parse(paused.data).event, 'paused');
    assert.deepEqual(JSON.parse(paused.data).timer, JSON.parse((await onA.next(EVENT_WITHIN_MS)).data).timer);
    console.log(
      `      (presence on A after B's stream opened: ${presenceMs.toFixed(0)} ms; the timer on both after the POST to B: ${timerMs.toFixed(0)} ms)`,
    );
  });

  it("a killed process's member leaves the room on the other process's streams, once, when the lease lapses", async () => {
    const [a, b] = [start(), start()];
    const [baseA, baseB] = await Promise.all([a.listening, b.listening]);
    const alice = database.studentKey;
    const room = await call(baseA, alice, '/api/rooms', { title: 'A process dies' });
    const { code } = await call(baseA, alice, `/api/rooms/${room.id}/join-code`, {});
    await call(baseB, bobKey, '/api/rooms/join', { code });
    const onA = await open(baseA, alice, room.id);
    assert.equal((await onA.next()).event, 'snapshot');
    const onB = await open(baseB, bobKey, room.id);
    await onB.next();
    assert.equal(JSON.parse((await onA.next(EVENT_WITHIN_MS)).data).event, 'joined');

    b.child.kill('SIGKILL');
    await b.exited;
    // Nobody renews the lease of Bob's stream now: it lapses by itself within a lease time (LEASE_TTL_MS) of its last
    // renewal, which is what this checks of it; that a dead holder's lease lapses, in real time, is the lease suite's
    // test (test/services/leases/). Its end is then brought forward to now instead of being waited for (a lapsed lease
    // is never renewed again), and what is tested is what follows a lapse: A's sweep finds the presence without a live
    // lease, within PRESENCE_SWEEP_EVERY_MS, and its `left` move reaches A's stream, once.
    const { stream_id: streamId } = await database.db
      .selectFrom('study_room_presences')
      .select('stream_id')
      .where('room_id', '=', room.id)
      .where('user_id', '=', bobId)
      .executeTakeFirstOrThrow();
    const { rows } = await sql<{
      ms: string;
    }>`select extract(epoch from expires_at - statement_timestamp()) * 1000 as ms
      from account_leases where id = ${streamId}`.execute(database.db);
    assert.equal(rows.length, 1, "Bob's presence is held by his stream's lease");
    const lapsesInMs = Number(rows[0]!.ms);
    assert.ok(lapsesInMs <= LEASE_TTL_MS, `the lease would lapse in ${Math.round(lapsesInMs)} ms`);
    const lapsedAt = performance.now();
    await database.db
      .updateTable('account_leases')
      .set({ expires_at: sql<Date>`statement_timestamp()` })
      .where('id', '=', streamId)
      .execute();
    // Due within one sweep interval; twice that and the event deadline allow for a machine doing twice its work.
    const left = await onA.next(2 * PRESENCE_SWEEP_EVERY_MS + EVENT_WITHIN_MS);
    const leftMs = performance.now() - lapsedAt;
    assert.equal(left.event, 'presence');
    assert.deepEqual(JSON.parse(left.data), { event: 'left', member: { nickname: 'bob_rooms', first_name: 'Bob' } });
    assert.equal(
      (await call(baseA, alice, `/api/rooms/${room.id}/members`)).data.find(
        (m: { nickname: string }) => m.nickname === 'bob_rooms',
      ).present,
      false,
    );
    const lefts = await database.db
      .selectFrom('study_room_moves')
      .select('id')
      .where('room_id', '=', room.id)
      .where('kind', '=', 'presence')
      .where(sql`data->>'event'`, '=', 'left')
      .execute();
    assert.equal(lefts.length, 1, 'one left move for the dead stream');
    console.log(`      (left on A after the lease lapsed: ${(leftMs / 1000).toFixed(1)} s)`);
  });
});
