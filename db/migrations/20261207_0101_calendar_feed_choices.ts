// Frozen in time: a migration never imports application code, so it runs the same forever.
// What a calendar feed shows is the student's choice, made when the feed is created:
//   - `kinds`: which of tasks, exams and holidays it carries (every feed made before this carries all three);
//   - `course`: only the tasks of this course and the exams of this subject (null: every course);
//   - `reminder_minutes`: a reminder (VALARM) this many minutes before each task and exam (none before this).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('calendar_feeds')
    .addColumn('kinds', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{tasks,exams,holidays}'`))
    .addColumn('course', 'text')
    .addColumn('reminder_minutes', sql`integer[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('calendar_feeds')
    .dropColumn('kinds')
    .dropColumn('course')
    .dropColumn('reminder_minutes')
    .execute();
}
