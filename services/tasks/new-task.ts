// A new task's row from the body createTask takes: for the REST operation and the sync's task_add command alike.
import type { NewTaskRow } from '../../db/queries/tasks.ts';
import type { components } from '../../generated/general/types.ts';
import type { Student } from '../../server/auth/principal.ts';
import { checkedRecurrence } from './series.ts';

export function newTask(body: components['schemas']['NewTask'], student: Student): NewTaskRow {
  const due_at = new Date(body.due_at);
  const recurrence = body.recurrence == null ? null : checkedRecurrence(body.recurrence, due_at, student.time_zone);
  return {
    user_id: student.user_id,
    title: body.title,
    course: body.course,
    due_at,
    notes: body.notes ?? null,
    priority: body.priority ?? 'normal',
    recurrence,
    series_starts_at: recurrence ? due_at : null,
  };
}
