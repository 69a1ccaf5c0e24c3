// Joining and leaving a study room offline: room_join and room_leave run joinRoom's and leaveRoom's own service
// functions, so they answer what those answer, within the same bounds and scope, with the same events; a room joined
// offline is named by its temp_id until the client knows its id, and a replayed join changes nothing.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { addMember } from '../../../db/queries/rooms.ts';
import { MAX_ROOM_MEMBERS } from '../../../domain/bounds.ts';
import { ALL_SCOPES } from '../../../server/auth/scopes.ts';
import { generalApp, type Student } from '../../support/general-app.ts';

type Ctx = Awaited<ReturnType<typeof generalApp>>;
type Result = { uuid: string; status: string; object?: Record<string, any>; error?: Record<string, unknown> };

async function push(ctx: Ctx, student: Student, commands: object[]) {
  return (await ctx.api.post('/api/sync/commands').set(student.headers).send({ commands }).expect(200)).body as {
    results: Result[];
    temp_id_mapping: Record<string, string>;
  };
}

async function roomWithCode(ctx: Ctx, owner: Student) {
  const room = (await ctx.api.post('/api/rooms').set(owner.headers).send({ title: 'Anatomy group' }).expect(201)).body;
  const code = (await ctx.api.post(`/api/rooms/${room.id}/join-code`).set(owner.headers).expect(201)).body.code;
  return { id: room.id as string, code: code as string };
}

async function eventTypes(ctx: Ctx, student: Student): Promise<string[]> {
  const rows = await ctx.db
    .selectFrom('events')
    .select('type')
    .where('user_id', '=', student.id)
    .where('type', 'like', 'room.%')
    .orderBy('seq')
    .execute();
  return rows.map((row) => row.type);
}

describe('pushSyncCommands: room_join and room_leave', () => {
  it('joins by code and leaves by temp_id as joinRoom and leaveRoom do, events included, once per uuid', async () => {
    const ctx = await generalApp();
    const [alice, bob] = [await ctx.newStudent(), await ctx.newStudent()];
    const room = await roomWithCode(ctx, alice);
    const ownerEvents = await eventTypes(ctx, alice);

    const joining = [{ uuid: randomUUID(), type: 'room_join', temp_id: 'anatomy', args: { code: room.code } }];
    const joined = await push(ctx, bob, joining);
    assert.equal(joined.results[0]!.status, 'ok');
    assert.equal(joined.temp_id_mapping.anatomy, room.id);
    // The room as joinRoom answers it, and as getRoom shows it to the new member.
    const shown = (await ctx.api.get(`/api/rooms/${room.id}`).set(bob.headers).expect(200)).body;
    assert.deepEqual(joined.results[0]!.object, shown);
    assert.equal(shown.role, 'member');
    assert.equal(shown.member_count, 2);
    assert.deepEqual(await eventTypes(ctx, bob), ['room.member_joined']);
    assert.deepEqual(await eventTypes(ctx, alice), [...ownerEvents, 'room.member_joined']);

    // The same join again changes nothing and sends no event.
    assert.deepEqual(await push(ctx, bob, joining), joined);
    assert.deepEqual(await eventTypes(ctx, bob), ['room.member_joined']);

    // A later batch leaves the room by the temp_id the join gave it; leaving again is leaveRoom's 404.
    const left = await push(ctx, bob, [
      { uuid: randomUUID(), type: 'room_leave', id: 'anatomy' },
      { uuid: randomUUID(), type: 'room_leave', id: room.id },
    ]);
    assert.deepEqual(
      left.results.map((r) => [r.status, r.object, r.error?.code]),
      [
        ['ok', undefined, undefined],
        ['error', undefined, 'not_found'],
      ],
    );
    await ctx.api.get(`/api/rooms/${room.id}`).set(bob.headers).expect(404);
    assert.equal((await ctx.api.get(`/api/rooms/${room.id}`).set(alice.headers).expect(200)).body.member_count, 1);
  });

  it('holds room_join to joinRoom’s bounds and scope, and answers an unknown code as joinRoom does', async () => {
    const ctx = await generalApp();
    const owner = await ctx.newStudent();
    const room = await roomWithCode(ctx, owner);
    const others = await Promise.all(Array.from({ length: MAX_ROOM_MEMBERS - 1 }, () => ctx.newStudent()));
    for (const other of others) await addMember(ctx.db, room.id, other.id, new Date());
    const late = await ctx.newStudent();
    const rest = await ctx.api.post('/api/rooms/join').set(late.headers).send({ code: room.code }).expect(409);
    const unknown = await ctx.api
      .post('/api/rooms/join')
      .set(late.headers)
      .send({ code: 'rjc_0000000000000000000000' })
      .expect(404);

    const pushed = await push(ctx, late, [
      { uuid: randomUUID(), type: 'room_join', args: { code: room.code } },
      { uuid: randomUUID(), type: 'room_join', args: { code: 'rjc_0000000000000000000000' } },
      { uuid: randomUUID(), type: 'room_join', args: { code: 'hello' } },
    ]);
    const { instance: _i, request_id: _r, ...full } = rest.body;
    const { instance: _j, request_id: _s, ...none } = unknown.body;
    assert.deepEqual(pushed.results[0]!.error, full);
    assert.equal(full.code, 'room_full');
    assert.deepEqual(pushed.results[1]!.error, none);
    assert.equal(pushed.results[2]!.error!.code, 'invalid_request');
    assert.deepEqual(await eventTypes(ctx, late), []);

    // Without rooms:write, the commands are refused as the REST operations are.
    const reader = await ctx.newStudent({ scopes: ALL_SCOPES.filter((scope) => scope !== 'rooms:write') });
    const refused = await push(ctx, reader, [
      { uuid: randomUUID(), type: 'room_join', args: { code: room.code } },
      { uuid: randomUUID(), type: 'room_leave', id: room.id },
    ]);
    const restRefusal = await ctx.api.post('/api/rooms/join').set(reader.headers).send({ code: room.code }).expect(403);
    assert.deepEqual(
      refused.results.map((r) => r.error?.code),
      [restRefusal.body.code, restRefusal.body.code],
    );
    assert.equal(restRefusal.body.code, 'insufficient_scope');
  });
});
