// Study rooms over HTTP: creating within the bounds, joining by a revocable code, members and who may see what,
// leaving (the owner's room passes on), deleting, the shared focus timer and a finished session's study activity,
// the events, account deletion and the export.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { countOwnedRooms } from '../../../db/queries/rooms.ts';
import { envelopeOf } from '../../../services/events/emit.ts';
import { MAX_ROOM_MEMBERS, MAX_ROOMS_JOINED, MAX_ROOMS_OWNED } from '../../../domain/bounds.ts';
import { assertEventConforms } from '../../support/event-contract.ts';
import { changesListed } from '../../support/feed-horizon.ts';
import { generalApp, type Student } from '../../support/general-app.ts';
import { describeIdempotentCreate } from '../../support/idempotent-create.ts';
import { deleteWithRooms } from '../../support/query-fixture.ts';
import { assertIdRefusals } from '../../support/refusals.ts';

type Ctx = Awaited<ReturnType<typeof generalApp>>;
type Api = Ctx['api'];

async function createRoom(api: Api, student: Student, fields: Record<string, unknown> = {}) {
  return (
    await api
      .post('/api/rooms')
      .set(student.headers)
      .send({ title: 'Anatomy group', ...fields })
      .expect(201)
  ).body;
}

async function codeOf(api: Api, owner: Student, roomId: string): Promise<string> {
  return (await api.post(`/api/rooms/${roomId}/join-code`).set(owner.headers).expect(201)).body.code;
}

/** A room of `owner` that each of `others` joined, in order. */
async function roomWith(api: Api, owner: Student, others: Student[]) {
  const room = await createRoom(api, owner);
  const code = await codeOf(api, owner, room.id);
  for (const other of others) await api.post('/api/rooms/join').set(other.headers).send({ code }).expect(200);
  return { id: room.id as string, code };
}

async function eventsOf(ctx: Ctx, studentId: string, type: string) {
  const rows = await ctx.db
    .selectFrom('events')
    .select(['id', 'type', 'user_id', 'data', 'created_at'])
    .where('user_id', '=', studentId)
    .where('type', '=', type)
    .orderBy('created_at')
    .orderBy('seq')
    .execute();
  const events = rows.map(envelopeOf);
  for (const event of events) assertEventConforms(event);
  return events as Array<{ type: string; student_id: string; data: any }>;
}

const roomOf = (api: Api, owner: Student) => createRoom(api, owner).then((room) => room.id as string);

describe('study rooms', () => {
  describe('createRoom', () => {
    it('creates a room whose owner is its one member, and tells room.created', async () => {
      const ctx = await generalApp();
      const alice = await ctx.newStudent();
      const room = await createRoom(ctx.api, alice, { title: 'Calculus group', course: 'Calculus' });
      assert.deepEqual(
        { ...room, id: undefined, created_at: undefined },
        {
          id: undefined,
          created_at: undefined,
          title: 'Calculus group',
          course: 'Calculus',
          visibility: 'invite',
          role: 'owner',
          member_count: 1,
          join_code: null,
          timer: null,
        },
      );
      const [event] = await eventsOf(ctx, alice.id, 'room.created');
      assert.deepEqual(event!.data.object, room);
      assert.deepEqual((await ctx.api.get('/api/rooms').set(alice.headers).expect(200)).body.data, [room]);
      assert.deepEqual((await ctx.api.get(`/api/rooms/${room.id}`).set(alice.headers).expect(200)).body, room);
    });

    it('refuses a bad body, no credential, and a credential without rooms:write', async () => {
      const ctx = await generalApp();
      const [alice, reader] = [await ctx.newStudent(), await ctx.newStudent({ scopes: ['rooms:read'] })];
      await ctx.api.post('/api/rooms').set(alice.headers).send({ title: '' }).expect(400);
      await ctx.api.post('/api/rooms').set(alice.headers).send({ title: 'x', visibility: 'public' }).expect(400);
      await ctx.api.post('/api/rooms').send({ title: 'x' }).expect(401);
      await ctx.api.get('/api/rooms').expect(401);
      assert.equal(
        (await ctx.api.post('/api/rooms').set(reader.headers).send({ title: 'x' }).expect(403)).body.code,
        'insufficient_scope',
      );
      const writer = await ctx.newStudent({ scopes: ['rooms:write'] });
      assert.equal((await ctx.api.get('/api/rooms').set(writer.headers).expect(403)).body.code, 'insufficient_scope');
      await ctx.api
        .get('/api/rooms')
        .set({ ...alice.headers, 'x-service-api-key': 'svc_live_x' })
        .expect(400);
    });

    it(`a student owns at most ${MAX_ROOMS_OWNED} rooms: one more is 409 room_limit_reached, until one goes`, async () => {
      const ctx = await generalApp();
      const alice = await ctx.newStudent();
      const ids = [];
      for (let i = 0; i < MAX_ROOMS_OWNED; i++) ids.push((await createRoom(ctx.api, alice)).id);
      const refused = await ctx.api.post('/api/rooms').set(alice.headers).send({ title: 'one more' }).expect(409);
      assert.equal(refused.body.code, 'room_limit_reached');
      await ctx.api.delete(`/api/rooms/${ids[0]}`).set(alice.headers).expect(204);
      await createRoom(ctx.api, alice);
    });

    describeIdempotentCreate({
      prepare: async () => '/api/rooms',
      body: { title: 'Retried room' },
      otherBody: { title: 'Another room' },
      count: async (api, student) => (await api.get('/api/rooms').set(student.headers).expect(200)).body.data.length,
    });
  });

  describe('joining by code', () => {
    it('joins with the current code, once; a rotated or revoked code is 404; members see nicknames and first names only', async () => {
      const ctx = await generalApp();
      const [alice, bob, carol] = [await ctx.newStudent(), await ctx.newStudent(), await ctx.newStudent()];
      const room = await createRoom(ctx.api, alice);
      const created = await ctx.api.post(`/api/rooms/${room.id}/join-code`).set(alice.headers).expect(201);
      assert.equal(created.headers['cache-control'], 'no-store');
      assert.ok(created.body.code.startsWith(created.body.prefix));
      const stored = await ctx.db
        .selectFrom('study_rooms')
        .selectAll()
        .where('id', '=', room.id)
        .executeTakeFirstOrThrow();
      assert.notEqual(stored.join_code_hash, created.body.code, 'only a hash is stored');
      assert.deepEqual((await ctx.api.get(`/api/rooms/${room.id}`).set(alice.headers).expect(200)).body.join_code, {
        prefix: created.body.prefix,
        created_at: created.body.created_at,
      });

      const joined = await ctx.api
        .post('/api/rooms/join')
        .set(bob.headers)
        .send({ code: created.body.code })
        .expect(200);
      assert.equal(joined.body.role, 'member');
      assert.equal(joined.body.member_count, 2);
      assert.equal(joined.body.join_code, null, 'a member is not shown the code');
      const again = await ctx.api
        .post('/api/rooms/join')
        .set(bob.headers)
        .send({ code: created.body.code })
        .expect(200);
      assert.equal(again.body.member_count, 2, 'joining twice changes nothing');
      assert.equal((await eventsOf(ctx, bob.id, 'room.member_joined')).length, 1);
      const [toOwner] = await eventsOf(ctx, alice.id, 'room.member_joined');
      assert.equal(toOwner!.data.object.role, 'owner');
      assert.equal(toOwner!.data.member.nickname, bob.nickname);

      const members = (await ctx.api.get(`/api/rooms/${room.id}/members`).set(bob.headers).expect(200)).body.data;
      assert.deepEqual(
        members.map((m: Record<string, unknown>) => Object.keys(m).sort()),
        [0, 1].map(() => ['first_name', 'joined_at', 'nickname', 'present', 'role']),
      );
      assert.deepEqual(
        members.map((m: { nickname: string; role: string; present: boolean }) => [m.nickname, m.role, m.present]),
        [
          [alice.nickname, 'owner', false],
          [bob.nickname, 'member', false],
        ],
      );

      const rotated = (await ctx.api.post(`/api/rooms/${room.id}/join-code`).set(alice.headers).expect(201)).body.code;
      const stale = await ctx.api
        .post('/api/rooms/join')
        .set(carol.headers)
        .send({ code: created.body.code })
        .expect(404);
      assert.equal(stale.body.code, 'not_found');
      await ctx.api.delete(`/api/rooms/${room.id}/join-code`).set(alice.headers).expect(204);
      await ctx.api.delete(`/api/rooms/${room.id}/join-code`).set(alice.headers).expect(204);
      await ctx.api.post('/api/rooms/join').set(carol.headers).send({ code: rotated }).expect(404);
      await ctx.api.post('/api/rooms/join').set(carol.headers).send({ code: 'not a code' }).expect(400);
      await ctx.api.post('/api/rooms/join').send({ code: rotated }).expect(401);
      const reader = await ctx.newStudent({ scopes: ['rooms:read'] });
      await ctx.api.post('/api/rooms/join').set(reader.headers).send({ code: rotated }).expect(403);
      assert.deepEqual((await ctx.api.get('/api/rooms').set(carol.headers).expect(200)).body.data, []);
    });

    it('only the owner changes the code or deletes the room: a member gets 403 room_owner_only', async () => {
      const ctx = await generalApp();
      const [alice, bob] = [await ctx.newStudent(), await ctx.newStudent()];
      const room = await roomWith(ctx.api, alice, [bob]);
      for (const request of [
        ctx.api.post(`/api/rooms/${room.id}/join-code`),
        ctx.api.delete(`/api/rooms/${room.id}/join-code`),
        ctx.api.delete(`/api/rooms/${room.id}`),
      ]) {
        assert.equal((await request.set(bob.headers).expect(403)).body.code, 'room_owner_only');
      }
      // The code still works: a refused rotation changed nothing.
      const carol = await ctx.newStudent();
      await ctx.api.post('/api/rooms/join').set(carol.headers).send({ code: room.code }).expect(200);
    });

    it(`a room has at most ${MAX_ROOM_MEMBERS} members (409 room_full); a student is in at most ${MAX_ROOMS_JOINED} rooms (409 room_join_limit_reached)`, async function () {
      this.timeout(120_000);
      const ctx = await generalApp();
      const owner = await ctx.newStudent();
      const room = await createRoom(ctx.api, owner);
      const code = await codeOf(ctx.api, owner, room.id);
      const joiners = await Promise.all(Array.from({ length: MAX_ROOM_MEMBERS }, () => ctx.newStudent()));
      for (const joiner of joiners.slice(1))
        await ctx.api.post('/api/rooms/join').set(joiner.headers).send({ code }).expect(200);
      const full = await ctx.api.post('/api/rooms/join').set(joiners[0]!.headers).send({ code }).expect(409);
      assert.equal(full.body.code, 'room_full');

      // A student in MAX_ROOMS_JOINED rooms (some of them their own) can neither join nor create another.
      const busy = joiners[1]!;
      for (let i = 1; i < MAX_ROOMS_OWNED; i++) await createRoom(ctx.api, busy);
      const hosts = joiners.slice(2, 2 + (MAX_ROOMS_JOINED - MAX_ROOMS_OWNED));
      for (const host of hosts) await roomWith(ctx.api, host, [busy]);
      assert.equal((await ctx.api.get('/api/rooms').set(busy.headers).expect(200)).body.data.length, MAX_ROOMS_JOINED);
      const other = await roomWith(ctx.api, joiners[0]!, []);
      assert.equal(
        (await ctx.api.post('/api/rooms/join').set(busy.headers).send({ code: other.code }).expect(409)).body.code,
        'room_join_limit_reached',
      );
      assert.equal(
        (await ctx.api.post('/api/rooms').set(busy.headers).send({ title: 'mine' }).expect(409)).body.code,
        'room_join_limit_reached',
      );
    });
  });

  describe('leaving and deleting', () => {
    it('a member leaves; the owner leaving hands the room to the earliest member, without its code; the last one deletes it', async () => {
      const ctx = await generalApp();
      const [alice, bob, carol] = [await ctx.newStudent(), await ctx.newStudent(), await ctx.newStudent()];
      const room = await roomWith(ctx.api, alice, [bob, carol]);
      await ctx.api.delete(`/api/rooms/${room.id}/membership`).set(alice.headers).expect(204);
      await ctx.api.get(`/api/rooms/${room.id}`).set(alice.headers).expect(404);
      const passed = (await ctx.api.get(`/api/rooms/${room.id}`).set(bob.headers).expect(200)).body;
      assert.equal(passed.role, 'owner');
      assert.equal(passed.member_count, 2);
      assert.equal(passed.join_code, null);
      await ctx.api.post('/api/rooms/join').set(alice.headers).send({ code: room.code }).expect(404);
      await ctx.api.delete(`/api/rooms/${room.id}/membership`).set(carol.headers).expect(204);
      await ctx.api.delete(`/api/rooms/${room.id}/membership`).set(carol.headers).expect(404);
      await ctx.api.delete(`/api/rooms/${room.id}/membership`).set(bob.headers).expect(204);
      assert.equal(
        await ctx.db.selectFrom('study_rooms').select('id').where('id', '=', room.id).executeTakeFirst(),
        undefined,
        'the last member leaving deleted it',
      );
    });

    describe(`a leaving owner's room passes on within the ${MAX_ROOMS_OWNED} rooms owned`, () => {
      const owned = (ctx: Ctx, student: Student) => countOwnedRooms(ctx.db, student.id);
      const exists = async (ctx: Ctx, id: string) =>
        (await ctx.db.selectFrom('study_rooms').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
      /** A student who owns the most rooms a student may. */
      async function fullOwner(ctx: Ctx) {
        const student = await ctx.newStudent();
        for (let i = 0; i < MAX_ROOMS_OWNED; i++) await roomOf(ctx.api, student);
        return student;
      }

      it('to the earliest member who may own another, else it closes (leaving, deleting the account)', async () => {
        const ctx = await generalApp();
        const [alice, bob, carol] = [await ctx.newStudent(), await fullOwner(ctx), await ctx.newStudent()];
        const lonely = await roomWith(ctx.api, alice, [bob]);
        const shared = await roomWith(ctx.api, alice, [bob, carol]);
        const deleted = await roomWith(ctx.api, alice, [bob]);
        await ctx.api.delete(`/api/rooms/${lonely.id}/membership`).set(alice.headers).expect(204);
        await ctx.api.delete(`/api/rooms/${shared.id}/membership`).set(alice.headers).expect(204);
        assert.equal(await exists(ctx, lonely.id), false, 'closed: its one other member owns the most rooms');
        assert.equal((await ctx.api.get(`/api/rooms/${shared.id}`).set(carol.headers).expect(200)).body.role, 'owner');
        assert.equal((await ctx.api.get(`/api/rooms/${shared.id}`).set(bob.headers).expect(200)).body.role, 'member');
        assert.ok(await deleteWithRooms(ctx.db, alice.id));
        assert.equal(await exists(ctx, deleted.id), false, "closed with its owner's account");
        assert.equal(await owned(ctx, bob), MAX_ROOMS_OWNED);
      });

      it('two owners leaving at once cannot both hand their room to a student with one place left', async () => {
        const ctx = await generalApp();
        const bob = await ctx.newStudent();
        for (let i = 0; i < MAX_ROOMS_OWNED - 1; i++) await roomOf(ctx.api, bob);
        const owners = [await ctx.newStudent(), await ctx.newStudent(), await ctx.newStudent()];
        const rooms: Array<{ id: string }> = [];
        const membershipOf = (id: string) => `/api/rooms/${id}/membership`;
        for (const owner of owners) rooms.push(await roomWith(ctx.api, owner, [bob]));
        const leaving = owners.map((owner, i) => ctx.api.delete(membershipOf(rooms[i]!.id)).set(owner.headers));
        for (const left of await Promise.all(leaving)) assert.equal(left.status, 204);
        assert.equal(await owned(ctx, bob), MAX_ROOMS_OWNED);
        const kept: string[] = [];
        for (const room of rooms) if (await exists(ctx, room.id)) kept.push(room.id);
        assert.equal(kept.length, 1, 'one room passed to Bob, the others closed');
      });
    });

    it('the owner deletes the room for every member', async () => {
      const ctx = await generalApp();
      const [alice, bob] = [await ctx.newStudent(), await ctx.newStudent()];
      const room = await roomWith(ctx.api, alice, [bob]);
      await ctx.api.delete(`/api/rooms/${room.id}`).set(alice.headers).expect(204);
      await ctx.api.get(`/api/rooms/${room.id}`).set(bob.headers).expect(404);
      await ctx.api.delete(`/api/rooms/${room.id}`).set(alice.headers).expect(404);
    });

    it('deleting an account hands its rooms on and ends its memberships; the export lists rooms owned and joined', async () => {
      const ctx = await generalApp();
      const [alice, bob] = [await ctx.newStudent(), await ctx.newStudent()];
      const shared = await roomWith(ctx.api, alice, [bob]);
      const alone = await roomOf(ctx.api, alice);
      const bobs = await roomWith(ctx.api, bob, [alice]);
      const exported = (await ctx.api.get('/api/users/me/export').set(alice.headers).expect(200)).body.study_rooms;
      assert.deepEqual(
        exported.map((r: { id: string; role: string }) => [r.id, r.role]).sort(),
        [
          [shared.id, 'owner'],
          [alone, 'owner'],
          [bobs.id, 'member'],
        ].sort(),
      );
      assert.ok(await deleteWithRooms(ctx.db, alice.id));
      const rooms = (await ctx.api.get('/api/rooms').set(bob.headers).expect(200)).body.data;
      assert.deepEqual(
        rooms.map((r: { id: string; role: string; member_count: number }) => [r.id, r.role, r.member_count]).sort(),
        [
          [shared.id, 'owner', 1],
          [bobs.id, 'owner', 1],
        ].sort(),
      );
      assert.equal(
        await ctx.db.selectFrom('study_rooms').select('id').where('id', '=', alone).executeTakeFirst(),
        undefined,
      );
    });
  });

  describe('refusals on a room id', () => {
    const ops = [
      { method: 'get' as const, path: (id: string) => `/api/rooms/${id}`, otherScope: 'tasks:read' as const },
      { method: 'get' as const, path: (id: string) => `/api/rooms/${id}/members`, otherScope: 'rooms:write' as const },
      { method: 'delete' as const, path: (id: string) => `/api/rooms/${id}`, otherScope: 'rooms:read' as const },
      {
        method: 'delete' as const,
        path: (id: string) => `/api/rooms/${id}/membership`,
        otherScope: 'rooms:read' as const,
      },
      {
        method: 'post' as const,
        path: (id: string) => `/api/rooms/${id}/join-code`,
        otherScope: 'rooms:read' as const,
      },
      {
        method: 'delete' as const,
        path: (id: string) => `/api/rooms/${id}/join-code`,
        otherScope: 'rooms:read' as const,
      },
      {
        method: 'post' as const,
        path: (id: string) => `/api/rooms/${id}/timer`,
        body: { action: 'start', duration_minutes: 25 },
        otherScope: 'rooms:read' as const,
      },
    ];
    for (const op of ops) {
      it(`${op.method.toUpperCase()} ${op.path('{room_id}')}: 401, 403, 404 for a room the student is not in, 400`, async () => {
        await assertIdRefusals({ ...op, create: roomOf });
      });
    }
  });

  describe('the focus timer', () => {
    it('every member runs and reads the same timer; one live session per room', async () => {
      const ctx = await generalApp();
      const [alice, bob] = [await ctx.newStudent(), await ctx.newStudent()];
      const room = await roomWith(ctx.api, alice, [bob]);
      const timer = (body: Record<string, unknown>, who = alice) =>
        ctx.api.post(`/api/rooms/${room.id}/timer`).set(who.headers).send(body);
      const started = (await timer({ action: 'start', duration_minutes: 25 }).expect(200)).body;
      assert.equal(started.status, 'running');
      assert.equal(started.duration_minutes, 25);
      assert.equal(Date.parse(started.ends_at) - Date.parse(started.started_at), 25 * 60_000);
      const seen = (await ctx.api.get(`/api/rooms/${room.id}`).set(bob.headers).expect(200)).body.timer;
      assert.deepEqual(
        { ...seen, remaining_seconds: 0 },
        { ...started, remaining_seconds: 0 },
        'the other member reads the same session',
      );
      assert.equal(
        (await timer({ action: 'start', duration_minutes: 5 }, bob).expect(409)).body.code,
        'room_timer_conflict',
      );
      assert.equal((await timer({ action: 'resume' }).expect(409)).body.code, 'room_timer_conflict');
      const paused = (await timer({ action: 'pause' }, bob).expect(200)).body;
      assert.equal(paused.status, 'paused');
      assert.equal(paused.ends_at, null);
      const resumed = (await timer({ action: 'resume' }).expect(200)).body;
      assert.equal(resumed.status, 'running');
      assert.ok(Date.parse(resumed.ends_at) >= Date.parse(started.ends_at), 'a pause moves the end later');
      assert.equal((await timer({ action: 'stop' }, bob).expect(200)).body.status, 'stopped');
      assert.equal((await timer({ action: 'stop' }).expect(409)).body.code, 'room_timer_conflict');
      await timer({ action: 'start' }).expect(400);
      await timer({ action: 'start', duration_minutes: 181 }).expect(400);
      assert.equal(
        (await timer({ action: 'start', duration_minutes: 50 }).expect(200)).body.status,
        'running',
        'a stopped session frees the room',
      );
      assert.deepEqual(
        await eventsOf(ctx, alice.id, 'room.session_finished'),
        [],
        'a stopped session is no study activity',
      );
    });

    it('a session that ran out counts as study activity of those in the room when it started: streak, xp, room.session_finished', async () => {
      const ctx = await generalApp();
      const [alice, bob, late] = [
        await ctx.newStudent({ time_zone: 'Asia/Almaty' }),
        await ctx.newStudent(),
        await ctx.newStudent(),
      ];
      const room = await roomWith(ctx.api, alice, [bob]);
      const session = (
        await ctx.api
          .post(`/api/rooms/${room.id}/timer`)
          .set(bob.headers)
          .send({ action: 'start', duration_minutes: 25 })
          .expect(200)
      ).body;
      await ctx.api.post('/api/rooms/join').set(late.headers).send({ code: room.code }).expect(200);
      // The session started 26 minutes ago: moved back in the store, with the memberships that came before it.
      const back = sql<Date>`interval '26 minutes'`;
      await ctx.db
        .updateTable('study_room_sessions')
        .set({ started_at: sql`started_at - ${back}` })
        .where('id', '=', session.session_id)
        .execute();
      await ctx.db
        .updateTable('study_room_members')
        .set({ joined_at: sql`joined_at - ${back}` })
        .where('room_id', '=', room.id)
        .where('user_id', 'in', [alice.id, bob.id])
        .execute();

      const read = (await ctx.api.get(`/api/rooms/${room.id}`).set(late.headers).expect(200)).body.timer;
      assert.equal(read.status, 'finished');
      assert.equal(read.remaining_seconds, 0);
      for (const student of [alice, bob]) {
        const [event] = await eventsOf(ctx, student.id, 'room.session_finished');
        assert.equal(event!.data.object.session_id, session.session_id);
        assert.equal(event!.data.xp_awarded, 5, '1 xp per 5 minutes of a 25-minute session');
        const profile = (await ctx.api.get('/api/users/me').set(student.headers).expect(200)).body;
        assert.equal(profile.xp, 5);
        assert.equal(profile.streak, 1);
      }
      assert.deepEqual(await eventsOf(ctx, late.id, 'room.session_finished'), [], 'joined after it started');
      // Recorded once: more reads and a new session award nothing more for it.
      await ctx.api.get('/api/rooms').set(alice.headers).expect(200);
      await ctx.api
        .post(`/api/rooms/${room.id}/timer`)
        .set(alice.headers)
        .send({ action: 'start', duration_minutes: 5 })
        .expect(200);
      assert.equal((await eventsOf(ctx, alice.id, 'room.session_finished')).length, 1);
      assert.equal((await ctx.api.get('/api/users/me').set(alice.headers).expect(200)).body.xp, 5);
    });

    it('focus xp shares the daily cap with reviews and tasks', async () => {
      const ctx = await generalApp();
      const alice = await ctx.newStudent();
      const today = new Date().toISOString().slice(0, 10);
      await ctx.db
        .insertInto('xp_awards')
        .values({
          user_id: alice.id,
          award_key: `task:${randomUUID()}`,
          source: 'task',
          amount: 148,
          local_date: today,
          awarded_at: new Date(),
        })
        .execute();
      const room = await roomOf(ctx.api, alice);
      const session = (
        await ctx.api
          .post(`/api/rooms/${room}/timer`)
          .set(alice.headers)
          .send({ action: 'start', duration_minutes: 60 })
          .expect(200)
      ).body;
      await ctx.db
        .updateTable('study_room_sessions')
        .set({ started_at: sql`started_at - interval '61 minutes'` })
        .where('id', '=', session.session_id)
        .execute();
      await ctx.db
        .updateTable('study_room_members')
        .set({ joined_at: sql`joined_at - interval '61 minutes'` })
        .where('room_id', '=', room)
        .execute();
      await ctx.api.get(`/api/rooms/${room}`).set(alice.headers).expect(200);
      const [event] = await eventsOf(ctx, alice.id, 'room.session_finished');
      assert.equal(event!.data.xp_awarded, 2, 'what is left of the cap of 150, not 12');
    });
  });

  describe('events', () => {
    it('the changes feed lists room events to a credential with rooms:read only', async () => {
      const ctx = await generalApp();
      const alice = await ctx.newStudent();
      await createRoom(ctx.api, alice);
      // On PostgreSQL the feed lists the event once the server's older transactions have ended (feed-horizon.ts).
      await changesListed(ctx.db, alice.id);
      const narrow = await ctx.newStudent({ scopes: ['tasks:read'] });
      assert.equal(
        (await ctx.api.get('/api/events').query({ type: 'room.created' }).set(narrow.headers).expect(403)).body.code,
        'insufficient_scope',
      );
      const feed = await ctx.api.get('/api/events').query({ type: 'room.created' }).set(alice.headers).expect(200);
      assert.deepEqual(
        feed.body.data.map((e: { type: string }) => e.type),
        ['room.created'],
      );
    });
  });
});
