// db/queries/tasks.ts on the run's engine: keyset pages by (due_at, id), filter bounds, the open-work read of the
// daily loop, one successor per occurrence, and no task of another student found, changed or deleted.
import assert from 'node:assert/strict';
import { NoResultError } from 'kysely';
import {
  deleteTask,
  findTask,
  insertNextOccurrence,
  listOpenTasks,
  listTasks,
  updateTask,
  type TaskRow,
} from '../../../db/queries/tasks.ts';
import { completeTask, db, deleteNewStudents, newStudent, newTask } from '../../support/query-fixture.ts';

const at = (iso: string) => new Date(iso);

describe('task queries', () => {
  after(deleteNewStudents);

  it('pages by (due_at, id): every task once, in order, ties on due_at broken by id, one extra row telling more follow', async () => {
    const student = await newStudent();
    const other = await newStudent();
    const due = [
      '2026-03-02T09:00:00Z',
      '2026-03-01T09:00:00Z',
      '2026-03-02T09:00:00Z',
      '2026-03-02T09:00:00Z',
      '2026-03-03T09:00:00Z',
    ];
    for (const iso of due) await newTask(student, at(iso));
    await newTask(other, at('2026-03-01T12:00:00Z'));

    const pages: TaskRow[][] = [];
    let after: { at: Date; id: string } | undefined;
    for (;;) {
      const rows = await listTasks(db(), student, {}, after, 2);
      assert.ok(rows.length <= 3);
      const page = rows.slice(0, 2);
      pages.push(page);
      if (rows.length <= 2) break;
      after = { at: page.at(-1)!.due_at, id: page.at(-1)!.id };
    }
    assert.deepEqual(
      pages.map((page) => page.length),
      [2, 2, 1],
    );
    const walked = pages.flat();
    const expected = [...walked].sort((a, b) => a.due_at.getTime() - b.due_at.getTime() || (a.id < b.id ? -1 : 1));
    assert.deepEqual(
      walked.map((t) => t.id),
      expected.map((t) => t.id),
    );
    assert.equal(new Set(walked.map((t) => t.id)).size, due.length);
  });

  it('filters by status and course, due_from inclusive and due_to exclusive', async () => {
    const student = await newStudent();
    const early = await newTask(student, at('2026-03-01T00:00:00Z'), { course: 'Physics' });
    const edge = await newTask(student, at('2026-03-02T00:00:00Z'), { course: 'Maths' });
    const done = await newTask(student, at('2026-03-01T12:00:00Z'), { course: 'Physics' });
    await completeTask(student, done.id, at('2026-03-01T11:00:00Z'));
    const ids = async (filters: Parameters<typeof listTasks>[2]) =>
      (await listTasks(db(), student, filters, undefined, 10)).map((t) => t.id);

    assert.deepEqual(await ids({ due_from: at('2026-03-01T00:00:00Z'), due_to: at('2026-03-02T00:00:00Z') }), [
      early.id,
      done.id,
    ]);
    assert.deepEqual(await ids({ due_from: at('2026-03-02T00:00:00Z') }), [edge.id]);
    assert.deepEqual(await ids({ status: 'open' }), [early.id, edge.id]);
    assert.deepEqual(await ids({ status: 'completed' }), [done.id]);
    assert.deepEqual(await ids({ course: 'Physics', status: 'open' }), [early.id]);
  });

  it('reads open work earliest first, overdue included, due strictly before the bound, at most the limit', async () => {
    const student = await newStudent();
    const overdue = await newTask(student, at('2020-01-01T00:00:00Z'));
    const today = await newTask(student, at('2026-03-01T10:00:00Z'));
    await newTask(student, at('2026-03-02T00:00:00Z')); // exactly at the bound: tomorrow's
    const closed = await newTask(student, at('2026-03-01T08:00:00Z'));
    await completeTask(student, closed.id, at('2026-03-01T07:00:00Z'));

    const open = await listOpenTasks(db(), student, { dueBefore: at('2026-03-02T00:00:00Z') });
    assert.deepEqual(
      open.map((t) => t.id),
      [overdue.id, today.id],
    );
    assert.deepEqual(
      (await listOpenTasks(db(), student, { limit: 1 })).map((t) => t.id),
      [overdue.id],
    );
    assert.equal((await listOpenTasks(db(), student)).length, 3);
  });

  it('starts a series only for a recurring task, and inserts one successor per occurrence however often it is asked', async () => {
    const student = await newStudent();
    assert.equal((await newTask(student, at('2026-03-01T09:00:00Z'))).series_id, null);
    const head = await newTask(student, at('2026-03-02T09:00:00Z'), { recurrence: 'FREQ=DAILY' });
    assert.equal(head.series_id, head.id);

    const next = {
      user_id: student,
      title: head.title,
      course: null,
      due_at: at('2026-03-03T09:00:00Z'),
      notes: null,
      priority: 'normal' as const,
    };
    const successor = {
      ...next,
      recurrence: 'FREQ=DAILY',
      series_starts_at: head.due_at,
      series_id: head.id,
      previous_id: head.id,
    };
    const first = await insertNextOccurrence(db(), successor, new Date());
    const second = await insertNextOccurrence(db(), successor, new Date());
    assert.ok(first);
    assert.equal(first.series_id, head.id);
    assert.equal(second, undefined);
    assert.equal((await listTasks(db(), student, { due_from: at('2026-03-03T00:00:00Z') }, undefined, 10)).length, 1);
  });

  it("never finds, changes or deletes another student's task", async () => {
    const owner = await newStudent();
    const stranger = await newStudent();
    const task = await newTask(owner, at('2026-03-01T09:00:00Z'));

    assert.equal(await findTask(db(), stranger, task.id), undefined);
    assert.equal(await deleteTask(db(), stranger, task.id), undefined);
    await assert.rejects(updateTask(db(), stranger, task.id, { title: 'taken over' }), NoResultError);
    assert.equal((await findTask(db(), owner, task.id))?.title, task.title);
    assert.equal((await deleteTask(db(), owner, task.id))?.id, task.id);
    assert.equal(await findTask(db(), owner, task.id), undefined);
  });
});
