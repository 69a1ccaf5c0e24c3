// A task as the API shows it, from its row: the one mapper that the tasks operations and the schedule answer with and
// that the task events carry as their object, so an answer and an event about one task always agree.
import type { TaskRow } from '../../db/queries/tasks.ts';
import type { components } from '../../generated/general/types.ts';

export type Task = components['schemas']['Task'];

export function taskBody(row: TaskRow): Task {
  return {
    id: row.id,
    title: row.title,
    course: row.course,
    due_at: row.due_at.toISOString(),
    status: row.status,
    completed_at: row.completed_at?.toISOString() ?? null,
    notes: row.notes,
    priority: row.priority,
    recurrence: row.recurrence,
    series_id: row.series_id,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
