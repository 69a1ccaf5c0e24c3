// A student's tasks: list, create, read, change (closing and reopening included) and remove. What a write does (its
// events, the study day and xp of closing, a series' next occurrence) is services/tasks/writes.ts.
import { findTask, listTasks as listTaskPage } from '../../db/queries/tasks.ts';
import { listSyncToken } from '../../services/sync/pull.ts';
import { newTask } from '../../services/tasks/new-task.ts';
import { taskBody } from '../../services/tasks/task-body.ts';
import { addTask, changeTask, removeTask } from '../../services/tasks/writes.ts';
import { problems } from '../../server/http/problems.ts';
import { page, timeIdCursor } from '../../server/contract/cursor.ts';
import { idempotently } from '../../server/http/idempotency.ts';
import type { Db } from '../../db/connect.ts';
import type { GeneralHandlers } from './types.ts';

export const listTasks: GeneralHandlers['listTasks'] = async ({ query, principal }, { db, now }) => {
  const due_from = query.due_from === undefined ? undefined : new Date(query.due_from);
  const due_to = query.due_to === undefined ? undefined : new Date(query.due_to);
  if (due_from && due_to && due_from >= due_to)
    throw problems.invalidRequest([{ path: 'query.due_to', message: 'must be after due_from' }]);
  const rows = await listTaskPage(
    db,
    principal.user_id,
    { status: query.status, course: query.course, due_from, due_to },
    timeIdCursor(query.cursor),
    query.limit,
  );
  const result = page(rows, query.limit, (row) => [row.due_at.toISOString(), row.id]);
  const body = { ...result, data: result.data.map(taskBody) };
  if (query.cursor !== undefined) return { status: 200, body };
  // The first page hands the sync token read in its own snapshot (Google Calendar's nextSyncToken, given first here).
  const token = await listSyncToken(db, principal, rows[0]?.horizon, now());
  return { status: 200, body, headers: { 'Sync-Token': token } };
};

export const createTask: GeneralHandlers['createTask'] = async ({ headers, body, principal }, { db, now }) => {
  const task = newTask(body, principal);
  const at = now();
  const create = async (to: Db) => ({ status: 201 as const, body: await addTask(to, task, at) });
  // Without a key there is nothing to store with the task: a task that does not recur is then one statement,
  // committed on its own (addTask).
  const key = headers['Idempotency-Key'];
  if (key === undefined) return create(db);
  return idempotently(db, { userId: principal.user_id, key, operationId: 'createTask', body, now: at }, create);
};

export const getTask: GeneralHandlers['getTask'] = async ({ path, principal }, { db }) => {
  const row = await findTask(db, principal.user_id, path.id);
  if (!row) throw taskNotFound();
  return { status: 200, body: taskBody(row) };
};

export const updateTask: GeneralHandlers['updateTask'] = async ({ path, body, principal }, { db, now }) => {
  const task = await changeTask(db, principal, path.id, body, now());
  if (!task) throw taskNotFound();
  return { status: 200, body: task };
};

export const deleteTask: GeneralHandlers['deleteTask'] = async ({ path, principal }, { db, now }) => {
  if (!(await removeTask(db, principal, path.id, now()))) throw taskNotFound();
  return { status: 204, body: undefined };
};

/** The same words for an unknown id and another student's, so the answer tells nothing about other students. */
function taskNotFound() {
  return problems.notFound('You have no task with this id.');
}
