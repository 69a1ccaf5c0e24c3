import { studentTransaction } from '../../db/student-transaction.ts';
import { findTask, findTaskForUpdate, insertTask, listTasks as listTaskPage, deleteTask as removeTask, updateTask as changeTask, type TaskChanges } from '../../db/queries/tasks.ts';
import { recordStudyDay } from '../../db/queries/streak.ts';
import { awardXp } from '../../db/queries/xp.ts';
import { previousAttributes } from '../../services/events/changes.ts';
import { emitEvent } from '../../services/events/emit.ts';
import { readinessMoved } from '../../services/events/readiness.ts';
import { assertSeriesRoom, insertSuccessor } from '../../services/tasks/series.ts';
import { problems } from '../../server/http/problems.ts';
import { page, timeIdCursor } from '../../server/http/cursor.ts';
import { idempotently } from '../../server/http/idempotency.ts';
import { assertValidRecurrence, InvalidRecurrence, normaliseRecurrence } from '../../domain/recurrence.ts';
import { localDate } from '../../domain/student-day.ts';
import { taskClaim } from '../../domain/xp.ts';
import { taskBody } from '../../services/tasks/task-body.ts';
import type { GeneralHandlers } from './types.ts';

export const listTasks: GeneralHandlers['listTasks'] = async ({ query, principal }, { db }) => {
  const due_from = query.due_from === undefined ? undefined : new Date(query.due_from);
  const due_to = query.due_to === undefined ? undefined : new Date(query.due_to);
  if (due_from && due_to && due_from >= due_to) throw problems.invalidRequest([{ path: 'query.due_to', message: 'must be after due_from' }]);
  const rows = await listTaskPage(db, principal.user_id, { status: query.status, course: query.course, due_from, due_to }, timeIdCursor(query.cursor), query.limit);
  const result = page(rows, query.limit, (row) => [row.due_at.toISOString(), row.id]);
  return { status: 200, body: { ...result, data: result.data.map(taskBody) } };
};

export const createTask: GeneralHandlers['createTask'] = async ({ headers, body, principal }, { db, now }) => {
  const due_at = new Date(body.due_at);
  const recurrence = body.recurrence == null ? null : checkedRecurrence(body.recurrence, due_at, principal.time_zone);
  const at = now();
  return idempotently(db, { userId: principal.user_id, key: headers['Idempotency-Key'], operationId: 'createTask', body, now: at }, async (trx) => {
    if (recurrence) await assertSeriesRoom(trx, principal.user_id, 0);
    const row = await insertTask(
      trx,
      {
        user_id: principal.user_id,
        title: body.title,
        course: body.course,
        due_at,
        notes: body.notes ?? null,
        priority: body.priority ?? 'normal',
        recurrence,
        series_starts_at: recurrence ? due_at : null,
      },
      at,
    );
    const task = taskBody(row);
    await emitEvent(trx, { type: 'task.created', studentId: principal.user_id, data: { object: task }, at });
    return { status: 201 as const, body: task };
  });
};

export const getTask: GeneralHandlers['getTask'] = async ({ path, principal }, { db }) => {
  const row = await findTask(db, principal.user_id, path.id);
  if (!row) throw taskNotFound();
  return { status: 200, body: taskBody(row) };
};

/**
 * Field changes, closing and reopening in one transaction. Closing an open occurrence of a recurring task inserts
 * its successor in the same transaction; the row lock and the unique previous_id make that happen at most once.
 */
export const updateTask: GeneralHandlers['updateTask'] = async ({ path, body, principal }, { db, now }) => {
  const at = now();
  const row = await studentTransaction(db, principal.user_id, async (trx) => {
    const current = await findTaskForUpdate(trx, principal.user_id, path.id);
    if (!current) throw taskNotFound();
    const { status, recurrence, due_at, ...fields } = body;
    const changes: TaskChanges = { ...fields, updated_at: at };
    const dueAt = due_at === undefined ? current.due_at : new Date(due_at);
    if (due_at !== undefined) changes.due_at = dueAt;
    const closing = status === 'completed' && current.status === 'open';
    if (closing) Object.assign(changes, { status: 'completed', completed_at: at });
    if (status === 'open' && current.status === 'completed') Object.assign(changes, { status: 'open', completed_at: null });
    if (recurrence === null) Object.assign(changes, { recurrence: null, series_starts_at: null });
    if (recurrence) {
      // A new rule starts at this occurrence; earlier occurrences stay in the series.
      const rule = checkedRecurrence(recurrence, dueAt, principal.time_zone);
      Object.assign(changes, { recurrence: rule, series_starts_at: dueAt, series_id: current.series_id ?? current.id });
    }
    const updated = await changeTask(trx, principal.user_id, path.id, changes);
    // Adding a rule to an open task, or reopening a task that has one, may start an open series: counted with it.
    const wasSeries = current.status === 'open' && current.recurrence !== null;
    if (!wasSeries && updated.status === 'open' && updated.recurrence !== null) await assertSeriesRoom(trx, principal.user_id, 1);
    const [before, after] = [taskBody(current), taskBody(updated)];
    const previous = previousAttributes(before, after, TASK_EVENT_FIELDS);
    if (closing) await emitEvent(trx, { type: 'task.completed', studentId: principal.user_id, data: { object: after, previous_attributes: previous }, at });
    else if (Object.keys(previous).length > 0) await emitEvent(trx, { type: 'task.updated', studentId: principal.user_id, data: { object: after, previous_attributes: previous }, at });
    if (closing) {
      const today = localDate(at, principal.time_zone);
      await recordStudyDay(trx, principal.user_id, today, at);
      // Once per task, ever: reopening and closing again finds its ledger key taken (domain/xp.ts).
      await awardXp(trx, principal.user_id, taskClaim(updated.id, current.due_at, at, today), at);
    }
    await readinessMoved(trx, principal, at);
    if (closing) {
      const successor = await insertSuccessor(trx, principal, updated, at);
      // The schedule gained a task: the next occurrence is created like any other task.
      if (successor) await emitEvent(trx, { type: 'task.created', studentId: principal.user_id, data: { object: taskBody(successor) }, at });
    }
    return updated;
  });
  return { status: 200, body: taskBody(row) };
};

export const deleteTask: GeneralHandlers['deleteTask'] = async ({ path, principal }, { db, now }) => {
  await studentTransaction(db, principal.user_id, async (trx) => {
    const removed = await removeTask(trx, principal.user_id, path.id);
    if (!removed) throw taskNotFound();
    const at = now();
    await emitEvent(trx, { type: 'task.deleted', studentId: principal.user_id, data: { object: taskBody(removed) }, at });
    await readinessMoved(trx, principal, at);
  });
  return { status: 204, body: undefined };
};

/** The fields a task.updated or task.completed event reports the earlier values of. */
const TASK_EVENT_FIELDS = ['title', 'course', 'due_at', 'status', 'completed_at', 'notes', 'priority', 'recurrence', 'series_id'] as const;

/** The same words for an unknown id and another student's, so the answer tells nothing about other students. */
function taskNotFound() {
  return problems.notFound('You have no task with this id.');
}

function checkedRecurrence(rule: string, seriesStart: Date, timeZone: string): string {
  try {
    assertValidRecurrence(rule, seriesStart, timeZone);
  } catch (error) {
    if (error instanceof InvalidRecurrence) throw problems.invalidRequest([{ path: 'body.recurrence', message: `is not a valid recurrence rule: ${error.message}` }]);
    throw error;
  }
  return normaliseRecurrence(rule);
}
