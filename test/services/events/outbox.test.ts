// The outbox: each change of a task or exam stores its event in the same transaction, with a payload the spec's
// `webhooks` section describes; a refused change stores none.
import assert from 'node:assert/strict';
import { envelopeOf } from '../../../services/events/emit.ts';
import { assertEventConforms } from '../../support/event-contract.ts';
import { generalApp, type Student } from '../../support/general-app.ts';

type Ctx = Awaited<ReturnType<typeof generalApp>>;

async function eventsOf({ db }: Ctx, student: Student) {
  const rows = await db
    .selectFrom('events')
    .select(['id', 'type', 'user_id', 'data', 'created_at'])
    .where('user_id', '=', student.id)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  const events = rows.map(envelopeOf);
  for (const event of events) assertEventConforms(event);
  return events as Array<{
    id: string;
    type: string;
    student_id: string;
    data: { object: { id: string } & Record<string, unknown>; previous_attributes?: Record<string, unknown> };
  }>;
}

describe('events outbox', () => {
  it('stores task.created, task.updated with the moved deadline, task.completed and task.deleted', async () => {
    const ctx = await generalApp();
    const alice = await ctx.newStudent();
    const task = (
      await ctx.api
        .post('/api/tasks')
        .set(alice.headers)
        .send({ title: 'Essay', due_at: '2026-12-01T09:00:00Z', course: 'CHEM 201' })
        .expect(201)
    ).body;
    await ctx.api
      .patch(`/api/tasks/${task.id}`)
      .set(alice.headers)
      .send({ due_at: '2026-12-03T09:00:00Z' })
      .expect(200);
    await ctx.api
      .patch(`/api/tasks/${task.id}`)
      .set(alice.headers)
      .send({ due_at: '2026-12-03T09:00:00Z' })
      .expect(200); // no change, no event
    await ctx.api.patch(`/api/tasks/${task.id}`).set(alice.headers).send({ status: 'completed' }).expect(200);
    await ctx.api.delete(`/api/tasks/${task.id}`).set(alice.headers).expect(204);

    const events = await eventsOf(ctx, alice);
    assert.deepEqual(
      events.map((e) => e.type),
      ['task.created', 'task.updated', 'task.completed', 'task.deleted'],
    );
    assert.ok(events.every((e) => e.student_id === alice.id && e.data.object.id === task.id));
    assert.deepEqual(events[1]!.data.previous_attributes, { due_at: '2026-12-01T09:00:00.000Z' });
    assert.equal(events[1]!.data.object.due_at, '2026-12-03T09:00:00.000Z');
    assert.equal(events[2]!.data.previous_attributes!.status, 'open');
    assert.equal(events[2]!.data.object.status, 'completed');
    assert.equal(new Set(events.map((e) => e.id)).size, 4);
  });

  it('closing a recurring task also tells of its next occurrence (task.created)', async () => {
    const ctx = await generalApp();
    const alice = await ctx.newStudent();
    const task = (
      await ctx.api
        .post('/api/tasks')
        .set(alice.headers)
        .send({ title: 'Weekly quiz', due_at: '2026-12-01T09:00:00Z', recurrence: 'FREQ=WEEKLY', course: 'CHEM 201' })
        .expect(201)
    ).body;
    await ctx.api.patch(`/api/tasks/${task.id}`).set(alice.headers).send({ status: 'completed' }).expect(200);
    const events = await eventsOf(ctx, alice);
    assert.deepEqual(events.map((e) => e.type).sort(), ['task.completed', 'task.created', 'task.created']);
    const successor = events.find((e) => e.type === 'task.created' && e.data.object.id !== task.id)!;
    assert.equal(successor.data.object.due_at, '2026-12-08T09:00:00.000Z');
  });

  it('stores exam.created, exam.updated with the earlier date and links, and exam.deleted', async () => {
    const ctx = await generalApp();
    const alice = await ctx.newStudent();
    const task = (
      await ctx.api
        .post('/api/tasks')
        .set(alice.headers)
        .send({ title: 'Past paper', due_at: '2026-12-01T09:00:00Z', course: 'CHEM 201' })
        .expect(201)
    ).body;
    const exam = (
      await ctx.api
        .post('/api/exams')
        .set(alice.headers)
        .send({ subject: 'Calculus', exam_date: '2027-01-15' })
        .expect(201)
    ).body;
    await ctx.api
      .patch(`/api/exams/${exam.id}`)
      .set(alice.headers)
      .send({ exam_date: '2027-01-20', task_ids: [task.id] })
      .expect(200);
    await ctx.api.delete(`/api/exams/${exam.id}`).set(alice.headers).expect(204);
    const events = (await eventsOf(ctx, alice)).filter((e) => e.type.startsWith('exam.'));
    assert.deepEqual(
      events.map((e) => e.type),
      ['exam.created', 'exam.updated', 'exam.deleted'],
    );
    assert.deepEqual(events[1]!.data.previous_attributes, { exam_date: '2027-01-15', task_ids: [] });
    assert.deepEqual(events[2]!.data.object.task_ids, [task.id]);
  });

  it('a refused change stores no event', async () => {
    const ctx = await generalApp();
    const alice = await ctx.newStudent();
    const bob = await ctx.newStudent();
    const task = (
      await ctx.api
        .post('/api/tasks')
        .set(bob.headers)
        .send({ title: 'Not yours', due_at: '2026-12-01T09:00:00Z', course: 'CHEM 201' })
        .expect(201)
    ).body;
    await ctx.api.patch(`/api/tasks/${task.id}`).set(alice.headers).send({ title: 'Mine now' }).expect(404);
    await ctx.api.delete(`/api/tasks/${task.id}`).set(alice.headers).expect(404);
    await ctx.api
      .post('/api/exams')
      .set(alice.headers)
      .send({ subject: 'Calculus', exam_date: '2027-01-15', task_ids: [task.id] })
      .expect(400);
    assert.deepEqual(await eventsOf(ctx, alice), []);
  });
});
