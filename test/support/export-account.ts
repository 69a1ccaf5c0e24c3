// What the export tests share: a large account (tasks with 4 KB of notes each, written straight to the database in
// batches: creating thousands through the API would only measure the API), and a look at the account's export lease.
import { sql } from 'kysely';
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

/** The student's export leases: 1 while an export of the account runs, in any process. */
export async function exportLeasesOf(db: Db, userId: string): Promise<number> {
  const leases = await db
    .selectFrom('account_leases')
    .select('id')
    .where('user_id', '=', userId)
    .where('kind', '=', 'export')
    .where('expires_at', '>', sql<Date>`statement_timestamp()`)
    .execute();
  return leases.length;
}

/** Polls `read` until `check` holds (at most `attempts` times, 100 ms apart); the last value is returned to assert on. */
export async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, attempts = 100): Promise<T> {
  let value = await read();
  for (let i = 1; i < attempts && !check(value); i++) {
    await new Promise((r) => setTimeout(r, 100));
    value = await read();
  }
  return value;
}
