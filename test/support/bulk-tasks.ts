// A large account for the export tests: tasks with 4 KB of notes each, written straight to the database in batches
// (creating thousands through the API would only measure the API).
import type { Db } from '../../db/connect.ts';

const NOTES = 'n'.repeat(4096);
const BATCH = 500;

export async function addManyTasks(db: Db, userId: string, count: number): Promise<void> {
  for (let start = 0; start < count; start += BATCH) {
    const rows = Array.from({ length: Math.min(BATCH, count - start) }, (_, i) => ({
      user_id: userId,
      title: `bulk ${start + i}`,
      course: null,
      due_at: new Date('2026-12-01T10:00:00Z'),
      notes: NOTES,
      recurrence: null,
      series_id: null,
      series_starts_at: null,
      updated_at: new Date('2026-11-20T10:00:00Z'),
    }));
    await db.insertInto('tasks').values(rows).execute();
  }
}
