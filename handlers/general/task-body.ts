// One mapper from a task row to the API's Task, shared by the tasks operations and the schedule.
import type { TaskRow } from '../../db/queries/tasks.ts';
import type { Schemas } from './types.ts';

export function taskBody(row: TaskRow): Schemas['Task'] {
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
