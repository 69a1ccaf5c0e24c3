// A task's writes with what follows from each, in one student transaction: the event that tells of it, readiness for
// the exams the task prepares, and, when an open task is closed, the study day, its xp and the next occurrence of
// its series. The tasks handlers parse the request and shape the answer; what a write does lives here.
import type { Db } from '../../db/connect.ts';
import {
  deleteTask,
  findTaskForUpdate,
  insertTaskRow,
  newTaskRow,
  updateTask,
  type NewTaskRow,
  type TaskChanges,
} from '../../db/queries/tasks.ts';
import { studentTransaction } from '../../db/student-transaction.ts';
import { localDate } from '../../domain/student-day.ts';
import { taskClaim } from '../../domain/xp.ts';
import type { components } from '../../generated/general/types.ts';
import { previousAttributes } from '../events/changes.ts';
import { emitEvent, outboxRow } from '../events/emit.ts';
import { progress } from '../progress/progress.ts';
import { assertSeriesRoom, checkedRecurrence, insertSuccessor } from './series.ts';
import { taskBody, type Task } from './task-body.ts';
import type { Student } from '../../server/auth/principal.ts';

/** The fields a task.updated or task.completed event reports the earlier values of. */
const TASK_EVENT_FIELDS = [
  'title',
  'course',
  'due_at',
  'status',
  'completed_at',
  'notes',
  'priority',
  'recurrence',
  'series_id',
] as const;

/**
 * Inserts a task and its task.created event, within the student's bound of open series when it recurs. A task that
 * does not recur is one statement (insertTaskRow, which says why it needs no student lock), in the caller's
 * transaction if there is one, else on its own; a recurring one first counts the open series, in a student
 * transaction.
 */
export async function addTask(db: Db, task: NewTaskRow, at: Date): Promise<Task> {
  const row = newTaskRow(task, at);
  const created = outboxRow({ type: 'task.created', studentId: task.user_id, data: { object: taskBody(row) }, at });
  if (!task.recurrence) return taskBody(await insertTaskRow(db, row, [created]));
  return studentTransaction(db, task.user_id, async (trx) => {
    await assertSeriesRoom(trx, task.user_id, 0);
    return taskBody(await insertTaskRow(trx, row, [created]));
  });
}

/**
 * Field changes, closing and reopening of a task of the student's, as the spec's TaskUpdate describes them; undefined
 * when the student has no task with this id. Closing an open occurrence of a recurring task inserts its successor in
 * the same transaction; the row lock and the unique previous_id make that happen at most once.
 */
export async function changeTask(
  db: Db,
  student: Student,
  taskId: string,
  update: components['schemas']['TaskUpdate'],
  at: Date,
): Promise<Task | undefined> {
  return studentTransaction(db, student.user_id, async (trx) => {
    const current = await findTaskForUpdate(trx, student.user_id, taskId);
    if (!current) return undefined;
    const { status, recurrence, due_at, ...fields } = update;
    const changes: TaskChanges = { ...fields, updated_at: at };
    const dueAt = due_at === undefined ? current.due_at : new Date(due_at);
    if (due_at !== undefined) changes.due_at = dueAt;
    const closing = status === 'completed' && current.status === 'open';
    if (closing) Object.assign(changes, { status: 'completed', completed_at: at });
    if (status === 'open' && current.status === 'completed')
      Object.assign(changes, { status: 'open', completed_at: null });
    if (recurrence === null) Object.assign(changes, { recurrence: null, series_starts_at: null });
    if (recurrence) {
      // A new rule starts at this occurrence; earlier occurrences stay in the series.
      const rule = checkedRecurrence(recurrence, dueAt, student.time_zone);
      Object.assign(changes, { recurrence: rule, series_starts_at: dueAt, series_id: current.series_id ?? current.id });
    }
    const updated = await updateTask(trx, student.user_id, taskId, changes);
    // Adding a rule to an open task, or reopening a task that has one, may start an open series: counted with it.
    const wasSeries = current.status === 'open' && current.recurrence !== null;
    if (!wasSeries && updated.status === 'open' && updated.recurrence !== null)
      await assertSeriesRoom(trx, student.user_id, 1);
    const [before, after] = [taskBody(current), taskBody(updated)];
    const previous = previousAttributes(before, after, TASK_EVENT_FIELDS);
    const data = { object: after, previous_attributes: previous };
    const type = closing ? 'task.completed' : Object.keys(previous).length > 0 ? 'task.updated' : undefined;
    const today = localDate(at, student.time_zone);
    await progress(trx, student, at, {
      // Once per task, ever: reopening and closing again finds its ledger key taken (domain/xp.ts).
      studied: closing ? { day: today, claim: taskClaim(updated.id, current.due_at, at, today) } : undefined,
      event: type && (() => ({ type, studentId: student.user_id, data, at })),
    });
    if (closing) {
      const successor = await insertSuccessor(trx, student, updated, at);
      // The schedule gained a task: the next occurrence is created like any other task.
      if (successor)
        await emitEvent(trx, {
          type: 'task.created',
          studentId: student.user_id,
          data: { object: taskBody(successor) },
          at,
        });
    }
    return after;
  });
}

/** Removes a task of the student's; false when the student has no task with this id. */
export async function removeTask(db: Db, student: Student, taskId: string, at: Date): Promise<boolean> {
  return studentTransaction(db, student.user_id, async (trx) => {
    const removed = await deleteTask(trx, student.user_id, taskId);
    if (!removed) return false;
    const deleted = {
      type: 'task.deleted' as const,
      studentId: student.user_id,
      data: { object: taskBody(removed) },
      at,
    };
    await progress(trx, student, at, { event: () => deleted });
    return true;
  });
}
