// The sync's pull: the full state a page at a time, then what changed since the token, applied by a client that keeps
// the student's data, which ends equal to the server's lists field by field, with nothing missed that changed while it
// paged. Kinds the credential may not read never appear; an expired token is 410, a forged one 400.
import assert from 'node:assert/strict';
import { EVENT_RETENTION_DAYS } from '../../../domain/bounds.ts';
import { encodeCursor } from '../../../server/contract/cursor.ts';
import { changesListed } from '../../support/feed-horizon.ts';
import { generalApp, type Student } from '../../support/general-app.ts';
import { pullUntilEqual, serverState, Store, type Obj, type Page } from '../../support/sync-store.ts';

type Ctx = Awaited<ReturnType<typeof generalApp>>;
const DAY_MS = 86_400_000;

async function addTask(ctx: Ctx, student: Student, title: string) {
  const body = { title, due_at: '2026-12-01T09:00:00Z', course: 'CHEM 201' };
  return (await ctx.api.post('/api/tasks').set(student.headers).send(body).expect(201)).body as Obj;
}

async function addExam(ctx: Ctx, student: Student, subject: string) {
  const body = { subject, exam_date: '2027-01-20' };
  return (await ctx.api.post('/api/exams').set(student.headers).send(body).expect(201)).body as Obj;
}

describe('pullSync', () => {
  it('gives the full state in pages, then each change once applied leaves the client equal to the server', async () => {
    const ctx = await generalApp();
    const [alice, bob] = await Promise.all([ctx.newStudent(), ctx.newStudent()]);
    const tasks = [];
    for (let i = 0; i < 5; i++) tasks.push(await addTask(ctx, alice, `t${i}`));
    const exams = [await addExam(ctx, alice, 'Anatomy'), await addExam(ctx, alice, 'Botany')];
    await addTask(ctx, bob, 'Bob’s own');

    // The full sync's token then lies after these writes, so the changes below are all its answers bring.
    await changesListed(ctx.db, alice.id);
    const phone = new Store();
    await phone.pull(ctx, alice, 3);
    assert.deepEqual(
      phone.pages.map((p) => [p.full_sync, p.tasks.length, p.exams.length, p.has_more]),
      [
        [true, 3, 0, true],
        [true, 2, 1, true],
        [true, 0, 1, false],
      ],
    );
    assert.deepEqual(phone.state(), await serverState(ctx, alice));

    // Offline on the server's side: a task changed, one closed, one deleted, a new one, an exam moved, one deleted.
    await ctx.api.patch(`/api/tasks/${tasks[0]!.id}`).set(alice.headers).send({ title: 'renamed' }).expect(200);
    await ctx.api.patch(`/api/tasks/${tasks[1]!.id}`).set(alice.headers).send({ status: 'completed' }).expect(200);
    await ctx.api.delete(`/api/tasks/${tasks[2]!.id}`).set(alice.headers).expect(204);
    const added = await addTask(ctx, alice, 'new');
    await ctx.api.patch(`/api/exams/${exams[0]!.id}`).set(alice.headers).send({ exam_date: '2027-02-01' }).expect(200);
    await ctx.api.delete(`/api/exams/${exams[1]!.id}`).set(alice.headers).expect(204);

    const before = phone.pages.length;
    await pullUntilEqual(ctx, alice, phone);
    const changes = phone.pages.slice(before);
    assert.ok(changes.every((page) => !page.full_sync));
    const deleted = changes.flatMap((page) => [...page.deleted.tasks, ...page.deleted.exams]);
    assert.deepEqual(deleted.sort(), [tasks[2]!.id, exams[1]!.id].sort());
    assert.ok(changes.some((page) => page.tasks.some((task) => task.id === added.id)));
    // Nothing of another student, and a quiet sync brings nothing.
    assert.ok(!changes.some((page) => page.tasks.some((task) => task.title === 'Bob’s own')));
    const quiet = await ctx.api.get('/api/sync').set(alice.headers).query({ sync_token: phone.token }).expect(200);
    assert.deepEqual(
      [quiet.body.tasks, quiet.body.exams, quiet.body.deleted],
      [[], [], { tasks: [], decks: [], cards: [], exams: [] }],
    );
  });

  it('misses nothing that changed while a full sync paged: it comes in the answers after the last page', async () => {
    const ctx = await generalApp();
    const alice = await ctx.newStudent();
    const tasks = [];
    for (let i = 0; i < 4; i++) tasks.push(await addTask(ctx, alice, `t${i}`));
    const first = (await ctx.api.get('/api/sync').set(alice.headers).query({ limit: 2 }).expect(200)).body as Page;
    assert.equal(first.has_more, true);
    // Between pages: a task already given changes, one not given yet goes, and a new one comes.
    const given = first.tasks[0]!.id;
    const notYet = tasks.map((t) => t.id).find((id) => !first.tasks.some((t) => t.id === id))!;
    await ctx.api.patch(`/api/tasks/${given}`).set(alice.headers).send({ title: 'changed while paging' }).expect(200);
    await ctx.api.delete(`/api/tasks/${notYet}`).set(alice.headers).expect(204);
    await addTask(ctx, alice, 'made while paging');

    const phone = new Store();
    phone.apply(first);
    await phone.pull(ctx, alice, 2);
    await pullUntilEqual(ctx, alice, phone);
    assert.equal(phone.objects.tasks.get(given)!.title, 'changed while paging');
    assert.ok(!phone.objects.tasks.has(notYet));
  });

  it('shows only the kinds the credential may read; none of them is 403, no credential 401', async () => {
    const ctx = await generalApp();
    const owner = await ctx.newStudent({ scopes: ['tasks:read', 'tasks:write', 'exams:write'] });
    await addTask(ctx, owner, 'mine');
    await ctx.api
      .post('/api/exams')
      .set(owner.headers)
      .send({ subject: 'Botany', exam_date: '2027-01-20' })
      .expect(201);
    const page = (await ctx.api.get('/api/sync').set(owner.headers).expect(200)).body as Page;
    assert.deepEqual([page.tasks.map((t) => t.title), page.exams], [['mine'], []]);
    const nothing = await ctx.newStudent({ scopes: ['tasks:write', 'ai:chat'] });
    const refused = await ctx.api.get('/api/sync').set(nothing.headers).expect(403);
    assert.equal(refused.body.code, 'insufficient_scope');
    await ctx.api.get('/api/sync').expect(401);
  });

  it('refuses a token older than the retention with 410 sync_token_expired, and a forged one with 400', async () => {
    const ctx = await generalApp();
    const alice = await ctx.newStudent();
    const old = encodeCursor([new Date(Date.now() - (EVENT_RETENTION_DAYS + 1) * DAY_MS).toISOString(), '1', 0]);
    const gone = await ctx.api.get('/api/sync').set(alice.headers).query({ sync_token: old }).expect(410);
    assert.equal(gone.body.code, 'sync_token_expired');
    assert.match(gone.body.detail, /sync_token=\*/);
    // A full sync's page token from before the retention: told at once, not at the end of its pages.
    const paused = encodeCursor(['full', old, 'tasks', '']);
    const stale = await ctx.api.get('/api/sync').set(alice.headers).query({ sync_token: paused }).expect(410);
    assert.equal(stale.body.code, 'sync_token_expired');
    for (const forged of [
      'nope',
      encodeCursor(['2026-11-01T00:00:00Z', 'x', 0]),
      encodeCursor(['full', old, 'rooms', '']),
      encodeCursor(['full', 'not a cursor', 'tasks', '']),
      encodeCursor(['full', old, 'tasks', 'not-an-id']),
    ]) {
      const res = await ctx.api.get('/api/sync').set(alice.headers).query({ sync_token: forged }).expect(400);
      assert.deepEqual(res.body.errors, [{ path: 'query.sync_token', message: 'is not a token this sync issued' }]);
    }
  });
});
