// The sync's push: a phone's queued edits in one batch, applied in order through the REST operations' own service
// functions and schemas, each once per uuid (a replayed batch changes nothing), naming new tasks by temp_id in the
// batch and in later ones; a failing command answers its problem and the others go on; two devices converge.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { generalApp, type Student } from '../../support/general-app.ts';

type Ctx = Awaited<ReturnType<typeof generalApp>>;
type Command = { uuid?: string; type: string; temp_id?: string; id?: string; args?: object };
const DUE = '2026-12-08T09:00:00Z';

const withUuids = (commands: Command[]) => commands.map((command) => ({ uuid: randomUUID(), ...command }));

async function push(ctx: Ctx, student: Student, commands: Command[]) {
  return (await ctx.api.post('/api/sync/commands').set(student.headers).send({ commands }).expect(200)).body as {
    results: Array<{ uuid: string; status: string; object?: Record<string, unknown>; error?: Record<string, unknown> }>;
    temp_id_mapping: Record<string, string>;
  };
}

async function tasksOf(ctx: Ctx, student: Student) {
  const res = await ctx.api.get('/api/tasks').set(student.headers).query({ limit: 100 }).expect(200);
  return (res.body.data as Array<Record<string, unknown>>).sort((a, b) =>
    String(a.title).localeCompare(String(b.title)),
  );
}

async function eventCount(ctx: Ctx, student: Student) {
  const row = await ctx.db
    .selectFrom('events')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('user_id', '=', student.id)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('pushSyncCommands', () => {
  it('applies a day of offline edits in order, temp_ids included, and a replayed batch changes nothing', async () => {
    const ctx = await generalApp();
    const alice = await ctx.newStudent();
    const batch = withUuids([
      { type: 'task_add', temp_id: 'essay', args: { title: 'Essay', due_at: DUE, course: 'History' } },
      { type: 'task_update', id: 'essay', args: { priority: 'high', notes: 'two pages' } },
      { type: 'task_close', id: 'essay' },
      { type: 'task_add', temp_id: 'lab', args: { title: 'Lab report', due_at: DUE, course: null } },
      { type: 'task_add', temp_id: 'gone', args: { title: 'Mistake', due_at: DUE, course: null } },
      { type: 'task_delete', id: 'gone' },
    ]);
    const first = await push(ctx, alice, batch);
    assert.deepEqual(
      first.results.map((r) => r.status),
      ['ok', 'ok', 'ok', 'ok', 'ok', 'ok'],
    );
    assert.deepEqual(Object.keys(first.temp_id_mapping).sort(), ['essay', 'gone', 'lab']);
    const tasks = await tasksOf(ctx, alice);
    assert.deepEqual(
      tasks.map((t) => [t.id, t.title, t.priority, t.notes, t.status]),
      [
        [first.temp_id_mapping.essay, 'Essay', 'high', 'two pages', 'completed'],
        [first.temp_id_mapping.lab, 'Lab report', 'normal', null, 'open'],
      ],
    );
    // The closing answered the task as getTask does.
    const essay = (await ctx.api.get(`/api/tasks/${first.temp_id_mapping.essay}`).set(alice.headers).expect(200)).body;
    assert.deepEqual(first.results[2]!.object, essay);

    const events = await eventCount(ctx, alice);
    const again = await push(ctx, alice, batch);
    assert.deepEqual(again, first);
    assert.deepEqual(await tasksOf(ctx, alice), tasks);
    assert.equal(await eventCount(ctx, alice), events);

    // A later batch names a task by the temp_id an earlier one gave it.
    const later = await push(ctx, alice, withUuids([{ type: 'task_update', id: 'lab', args: { title: 'Lab 2' } }]));
    assert.equal(later.results[0]!.object!.id, first.temp_id_mapping.lab);
    assert.equal(later.results[0]!.object!.title, 'Lab 2');
  });

  it('answers a failing command with its REST problem and applies the others', async () => {
    const ctx = await generalApp();
    const alice = await ctx.newStudent();
    const result = await push(
      ctx,
      alice,
      withUuids([
        { type: 'task_add', args: { title: '', due_at: DUE, course: null } },
        { type: 'task_update', id: randomUUID(), args: { title: 'x' } },
        { type: 'task_close' },
        { type: 'task_update', id: 'nobody', args: { colour: 'red' } },
        { type: 'task_add', temp_id: 't', args: { title: 'Kept', due_at: DUE, course: null } },
        { type: 'task_add', temp_id: 't', args: { title: 'Same temp_id', due_at: DUE, course: null } },
      ]),
    );
    const outcomes = result.results.map((r) => [r.status, r.error?.code, r.error?.errors]);
    assert.deepEqual(outcomes, [
      [
        'error',
        'invalid_request',
        [{ path: 'commands.0.args.title', message: 'must NOT have fewer than 1 characters' }],
      ],
      ['error', 'not_found', undefined],
      ['error', 'invalid_request', [{ path: 'commands.2.id', message: 'is required by task_close' }]],
      [
        'error',
        'invalid_request',
        [{ path: 'commands.3.args.colour', message: 'is not a property of this object ("colour" must NOT be sent)' }],
      ],
      ['ok', undefined, undefined],
      ['error', 'invalid_request', [{ path: 'commands.5.temp_id', message: 'already names an object' }]],
    ]);
    assert.deepEqual(
      (await tasksOf(ctx, alice)).map((t) => t.title),
      ['Kept'],
    );
  });

  it('reads a temp_id as the client’s text only, even one an object’s prototype has', async () => {
    const ctx = await generalApp();
    const alice = await ctx.newStudent();
    const result = await push(
      ctx,
      alice,
      withUuids([
        { type: 'task_add', temp_id: '__proto__', args: { title: 'Odd name', due_at: DUE, course: null } },
        { type: 'task_close', id: '__proto__' },
        { type: 'task_close', id: 'valueOf' },
      ]),
    );
    assert.deepEqual(
      result.results.map((r) => [r.status, r.error?.code]),
      [
        ['ok', undefined],
        ['ok', undefined],
        ['error', 'not_found'],
      ],
    );
    assert.deepEqual(Object.keys(result.temp_id_mapping), ['__proto__']);
    assert.equal(result.results[1]!.object!.status, 'completed');
  });

  it('makes a deck and a card offline and reviews the card at the time it happened, once', async () => {
    const ctx = await generalApp();
    const alice = await ctx.newStudent();
    const reviewedAt = new Date(Date.now() - 2 * 3_600_000).toISOString();
    const batch = withUuids([
      { type: 'deck_add', temp_id: 'bio', args: { title: 'Biology' } },
      { type: 'card_add', id: 'bio', temp_id: 'cell', args: { front: 'Cell', back: 'The unit of life' } },
      { type: 'card_review', id: 'cell', args: { grade: 4, reviewed_at: reviewedAt } },
      { type: 'card_review', id: 'cell', args: { grade: 4, reviewed_at: '2020-01-01T00:00:00Z' } },
    ]);
    const first = await push(ctx, alice, batch);
    assert.deepEqual(
      first.results.map((r) => [r.status, r.error?.code, r.error?.errors]),
      [
        ['ok', undefined, undefined],
        ['ok', undefined, undefined],
        ['ok', undefined, undefined],
        [
          'error',
          'reviewed_at_out_of_range',
          [{ path: 'commands.3.args.reviewed_at', message: 'must be within the past 7 days and not in the future' }],
        ],
      ],
    );
    const { bio, cell } = first.temp_id_mapping;
    const card = (await ctx.api.get(`/api/flashcards/cards/${cell}`).set(alice.headers).expect(200)).body;
    assert.equal(card.deck_id, bio);
    assert.equal(Date.parse(card.last_reviewed_at), Date.parse(reviewedAt));
    assert.deepEqual(first.results[2]!.object, { review: first.results[2]!.object!.review, card });

    assert.deepEqual(await push(ctx, alice, batch), first);
    const reviews = await ctx.db.selectFrom('flashcard_reviews').select('id').where('card_id', '=', cell!).execute();
    assert.equal(reviews.length, 1);
  });

  it('holds each command to its REST scope, and refuses an empty batch (400) and no credential (401)', async () => {
    const ctx = await generalApp();
    const reader = await ctx.newStudent({ scopes: ['tasks:read'] });
    const result = await push(
      ctx,
      reader,
      withUuids([{ type: 'task_add', args: { title: 'No', due_at: DUE, course: null } }]),
    );
    assert.equal(result.results[0]!.error!.code, 'insufficient_scope');
    assert.deepEqual(await tasksOf(ctx, reader), []);
    const empty = await ctx.api.post('/api/sync/commands').set(reader.headers).send({ commands: [] }).expect(400);
    assert.equal(empty.body.code, 'invalid_request');
    await ctx.api
      .post('/api/sync/commands')
      .send({ commands: withUuids([{ type: 'task_close', id: 'x' }]) })
      .expect(401);
  });

  it('converges when two devices push their offline edits in either order', async () => {
    const ctx = await generalApp();
    const outcomes = [];
    for (const order of [
      ['phone', 'laptop'],
      ['laptop', 'phone'],
    ] as const) {
      const alice = await ctx.newStudent();
      const made = await push(
        ctx,
        alice,
        withUuids([
          { type: 'task_add', temp_id: 'both', args: { title: 'Essay', due_at: DUE, course: 'History' } },
          { type: 'task_add', temp_id: 'doomed', args: { title: 'Quiz', due_at: DUE, course: null } },
        ]),
      );
      const { both, doomed } = made.temp_id_mapping;
      // Each device edits other fields of one task; the phone closes it and deletes another the laptop edits.
      const edits = {
        phone: withUuids([
          { type: 'task_update', id: both, args: { due_at: '2026-12-09T09:00:00Z' } },
          { type: 'task_close', id: both },
          { type: 'task_delete', id: doomed },
        ]),
        laptop: withUuids([
          { type: 'task_update', id: both, args: { title: 'Essay, final', priority: 'high' } },
          { type: 'task_update', id: doomed, args: { notes: 'chapter 3' } },
        ]),
      };
      for (const device of order) await push(ctx, alice, edits[device]);
      outcomes.push(
        (await tasksOf(ctx, alice)).map((t) => [t.title, t.priority, t.due_at, t.status, t.course, t.notes]),
      );
    }
    assert.deepEqual(outcomes[0], [['Essay, final', 'high', '2026-12-09T09:00:00.000Z', 'completed', 'History', null]]);
    assert.deepEqual(outcomes[1], outcomes[0]);
  });
});
