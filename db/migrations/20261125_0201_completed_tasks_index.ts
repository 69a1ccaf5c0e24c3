// Frozen in time: a migration never imports application code, so it runs the same forever.
// The daily loop and readiness read a student's completed tasks by completion time (the latest before today, any
// since today, the distinct days of the last 14). tasks_user_due_idx orders them by due time, so each of those reads
// filtered every task of the student: 6,000 open tasks made the loop's statements scan all 6,000, three times.
// A partial index holds the completed tasks only, so creating an open task (the common write) does not maintain it.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('tasks_user_completed_idx')
    .on('tasks')
    .columns(['user_id', 'completed_at'])
    .where(sql.ref('status'), '=', 'completed')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('tasks_user_completed_idx').execute();
}
