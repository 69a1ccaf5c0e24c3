// The changes feed over HTTP: a student's events in commit order from a cursor, in the webhook envelope, limited to
// what the credential may read, resumable without a gap or a repeat, and refused (410) past the retention.
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { envelopeOf } from '../../../services/events/emit.ts';
import { EVENT_RETENTION_DAYS } from '../../../domain/bounds.ts';
import { purgeExpiredEvents } from '../../../services/events/feed.ts';
import { insertEvent } from '../../../db/queries/events.ts';
import { encodeCursor } from '../../../server/contract/cursor.ts';
import { changesListed } from '../../support/feed-horizon.ts';
import { generalApp, type Student } from '../../support/general-app.ts';

type Ctx = Awaited<ReturnType<typeof generalApp>>;
const DAY_MS = 86_400_000;

async function addTask(ctx: Ctx, student: Student, title = 'Essay') {
  return (
    await ctx.api
      .post('/api/tasks')
      .set(student.headers)
      .send({ title, due_at: '2026-12-01T09:00:00Z', course: 'CHEM 201' })
      .expect(201)
  ).body as { id: string };
}

async function addExam(ctx: Ctx, student: Student) {
  return (
    await ctx.api
      .post('/api/exams')
      .set(student.headers)
      .send({ subject: 'Anatomy', exam_date: '2027-01-20' })
      .expect(201)
  ).body as { id: string };
}

/**
 * Every event after `cursor` once the feed lists every event of the student (feed-horizon.ts), at least `count`.
 */
async function readAll(
  ctx: Ctx,
  student: Student,
  count: number,
  query: Record<string, string | number> = {},
  cursor?: string,
) {
  await changesListed(ctx.db, student.id);
  const read = await readOnce(ctx, student, query, cursor);
  assert.ok(read.events.length >= count, `${read.events.length} events listed, ${count} expected at least`);
  return read;
}

/** Every event after `cursor`, page by page; the ids seen and the cursor to store. */
async function readOnce(ctx: Ctx, student: Student, query: Record<string, string | number> = {}, cursor?: string) {
  const events: Array<{ id: string; type: string; data: { object: { id: string } } }> = [];
  for (let pages = 0; pages < 50; pages++) {
    const res = await ctx.api
      .get('/api/events')
      .set(student.headers)
      .query({ ...query, ...(cursor ? { cursor } : {}) })
      .expect(200);
    events.push(...res.body.data);
    cursor = res.body.next_cursor as string;
    assert.equal(typeof cursor, 'string');
    if (!res.body.has_more) return { events, cursor };
  }
  throw new Error('the feed did not end');
}

describe('listEvents (the changes feed)', () => {
  it('lists the student’s events oldest first, each the envelope of its stored row, and none of another student’s', async () => {
    const ctx = await generalApp();
    const [alice, bob] = await Promise.all([ctx.newStudent(), ctx.newStudent()]);
    const task = await addTask(ctx, alice);
    await ctx.api.patch(`/api/tasks/${task.id}`).set(alice.headers).send({ status: 'completed' }).expect(200);
    const exam = await addExam(ctx, alice);
    await ctx.api.delete(`/api/tasks/${task.id}`).set(alice.headers).expect(204);
    await addTask(ctx, bob, 'Bob’s own');

    const { events } = await readAll(ctx, alice, 4);
    assert.deepEqual(
      events.map((e) => e.type),
      ['task.created', 'task.completed', 'exam.created', 'task.deleted'],
    );
    assert.deepEqual(
      events.map((e) => e.data.object.id),
      [task.id, task.id, exam.id, task.id],
    );
    const stored = await ctx.db
      .selectFrom('events')
      .select(['id', 'type', 'user_id', 'data', 'created_at'])
      .where('user_id', '=', alice.id)
      .execute();
    const byId = new Map(stored.map((row) => [row.id, envelopeOf(row)]));
    for (const event of events) assert.deepEqual(event, byId.get(event.id));

    const bobs = await readAll(ctx, bob, 1);
    assert.deepEqual(
      bobs.events.map((e) => e.type),
      ['task.created'],
    );
  });

  it('resumes from a stored cursor across pages and later writes: every event once, none repeated', async () => {
    const ctx = await generalApp();
    const alice = await ctx.newStudent();
    for (let i = 0; i < 5; i++) await addTask(ctx, alice, `t${i}`);
    const first = await readAll(ctx, alice, 5, { limit: 2 });
    assert.equal(first.events.length, 5);

    // Nothing new: an empty page, and a cursor that still resumes in the right place.
    const quiet = await ctx.api.get('/api/events').set(alice.headers).query({ cursor: first.cursor }).expect(200);
    assert.deepEqual(quiet.body.data, []);
    assert.equal(quiet.body.has_more, false);
    for (let i = 5; i < 8; i++) await addTask(ctx, alice, `t${i}`);
    const later = await readAll(ctx, alice, 3, { limit: 2 }, quiet.body.next_cursor);
    assert.deepEqual(
      later.events.map((e) => e.type),
      ['task.created', 'task.created', 'task.created'],
    );

    const all = [...first.events, ...later.events].map((e) => e.id);
    assert.equal(new Set(all).size, 8);
    const fromScratch = await readAll(ctx, alice, 8, { limit: 100 });
    assert.deepEqual(
      fromScratch.events.map((e) => e.id),
      all,
    );
  });

  it('filters by one kind or several', async () => {
    const ctx = await generalApp();
    const alice = await ctx.newStudent();
    const task = await addTask(ctx, alice);
    await addExam(ctx, alice);
    await ctx.api.patch(`/api/tasks/${task.id}`).set(alice.headers).send({ status: 'completed' }).expect(200);

    assert.deepEqual(
      (await readAll(ctx, alice, 1, { type: 'exam.created' })).events.map((e) => e.type),
      ['exam.created'],
    );
    assert.deepEqual(
      (await readAll(ctx, alice, 2, { type: 'task.completed,exam.created' })).events.map((e) => e.type),
      ['exam.created', 'task.completed'],
    );
    await ctx.api.get('/api/events').set(alice.headers).query({ type: 'task.exploded' }).expect(400);
  });

  it('shows a credential only the kinds its scopes read; asking for another kind, or reading none, is 403', async () => {
    const ctx = await generalApp();
    const alice = await ctx.newStudent();
    await addTask(ctx, alice);
    await addExam(ctx, alice);
    const keyWith = async (scopes: string[]) => {
      const { key } = (
        await ctx.api
          .post('/api/users/me/api-keys')
          .set(alice.headers)
          .send({ name: scopes.join(' '), scopes })
          .expect(201)
      ).body;
      return { ...alice, headers: { authorization: `Bearer ${key}` } };
    };
    const tasksOnly = await keyWith(['tasks:read']);
    assert.deepEqual(
      (await readAll(ctx, tasksOnly, 1)).events.map((e) => e.type),
      ['task.created'],
    );
    assert.deepEqual(
      (await readAll(ctx, alice, 2)).events.map((e) => e.type),
      ['task.created', 'exam.created'],
    );
    const refused = await ctx.api
      .get('/api/events')
      .set(tasksOnly.headers)
      .query({ type: 'task.created,exam.created' })
      .expect(403);
    assert.equal(refused.body.code, 'insufficient_scope');
    const nothing = await keyWith(['tasks:write', 'ai:chat']);
    assert.equal((await ctx.api.get('/api/events').set(nothing.headers).expect(403)).body.code, 'insufficient_scope');
    await ctx.api.get('/api/events').expect(401);
  });

  it('refuses a cursor older than the retention with 410 cursor_expired, and a malformed one with 400', async () => {
    const ctx = await generalApp();
    const alice = await ctx.newStudent();
    const old = encodeCursor([new Date(Date.now() - (EVENT_RETENTION_DAYS + 1) * DAY_MS).toISOString(), '1', 0]);
    const res = await ctx.api.get('/api/events').set(alice.headers).query({ cursor: old }).expect(410);
    assert.equal(res.body.code, 'cursor_expired');
    assert.match(res.body.detail, /30 days/);
    const recent = encodeCursor([new Date(Date.now() - (EVENT_RETENTION_DAYS - 1) * DAY_MS).toISOString(), '1', 0]);
    await ctx.api.get('/api/events').set(alice.headers).query({ cursor: recent }).expect(200);
    for (const bad of [
      'nope',
      encodeCursor(['2026-11-01T00:00:00Z', 'x', 0]),
      encodeCursor(['2026-11-01T00:00:00Z', '1', -1]),
    ]) {
      assert.equal(
        (await ctx.api.get('/api/events').set(alice.headers).query({ cursor: bad }).expect(400)).body.code,
        'invalid_request',
      );
    }
  });

  it('refuses with 400 a cursor it could not have issued: stamped in the future, or placed before older events', async () => {
    const ctx = await generalApp();
    const alice = await ctx.newStudent();
    const now = Date.now();
    const threeDaysAgo = new Date(now - 3 * DAY_MS);
    await addTask(ctx, alice);
    await sql`update events set created_at = ${threeDaysAgo} where user_id = ${alice.id}`.execute(ctx.db);
    const { cursor } = await readAll(ctx, alice, 1);
    const read = (at: number) =>
      ctx.api
        .get('/api/events')
        .set(alice.headers)
        .query({ cursor: encodeCursor([new Date(at).toISOString(), '0', 0]) });
    for (const forged of [now + 365 * DAY_MS, now]) {
      const res = await read(forged).expect(400);
      assert.equal(res.body.code, 'invalid_request');
      assert.deepEqual(res.body.errors, [{ path: 'query.cursor', message: 'is not a cursor this list issued' }]);
    }
    // Placed at the start but stamped before the event (by more than a transaction takes): the whole feed, as issued.
    assert.equal((await read(threeDaysAgo.getTime() - 2 * DAY_MS).expect(200)).body.data.length, 1);
    // The cursor the feed issued after that event goes on.
    await ctx.api.get('/api/events').set(alice.headers).query({ cursor }).expect(200);
  });

  it('purges events past the retention and its margin, and keeps younger ones', async () => {
    const ctx = await generalApp();
    const alice = await ctx.newStudent();
    const now = new Date();
    const at = (days: number) => new Date(now.getTime() - days * DAY_MS);
    const old = await insertEvent(ctx.db, {
      type: 'user.warned',
      user_id: alice.id,
      data: {},
      created_at: at(EVENT_RETENTION_DAYS + 2),
      fanned_out_at: now,
    });
    const kept = await insertEvent(ctx.db, {
      type: 'user.warned',
      user_id: alice.id,
      data: {},
      created_at: at(EVENT_RETENTION_DAYS),
      fanned_out_at: now,
    });
    assert.ok((await purgeExpiredEvents(ctx.db, now, 1)) >= 1);
    const left = (await ctx.db.selectFrom('events').select('id').where('user_id', '=', alice.id).execute()).map(
      (row) => row.id,
    );
    assert.ok(!left.includes(old));
    assert.ok(left.includes(kept));
  });

  it('never passes an event of a transaction still open: it appears after the cursor once committed', async function () {
    if (!process.env.DATABASE_URL) this.skip(); // an open transaction beside the feed's read needs a second session
    const ctx = await generalApp();
    const alice = await ctx.newStudent();
    await addTask(ctx, alice, 'seen before');
    const before = await readAll(ctx, alice, 1);
    // A payload the spec accepts, for the event the slow transaction writes by hand.
    const { data } = await ctx.db
      .selectFrom('events')
      .select('data')
      .where('user_id', '=', alice.id)
      .executeTakeFirstOrThrow();
    let commitFirst!: () => void;
    const held = new Promise<void>((resolve) => (commitFirst = resolve));
    let firstWritten!: () => void;
    const written = new Promise<void>((resolve) => (firstWritten = resolve));
    const slow = ctx.db.transaction().execute(async (trx) => {
      await insertEvent(trx, {
        type: 'task.created',
        user_id: alice.id,
        data,
        created_at: new Date(),
        fanned_out_at: new Date(),
      });
      firstWritten();
      await held;
    });
    await written;
    const later = await addTask(ctx, alice, 'committed later'); // commits after the slow transaction took its id
    const during = await readOnce(ctx, alice, {}, before.cursor);
    assert.deepEqual(during.events, [], 'the later commit waits behind the open transaction');
    commitFirst();
    await slow;
    const after = await readAll(ctx, alice, 2, {}, during.cursor);
    // The slow transaction's event first (its id is older), then the one that committed while it was open.
    assert.deepEqual(
      after.events.map((e) => e.data.object.id),
      [before.events[0]!.data.object.id, later.id],
    );
  });
});
