// Frozen in time: a migration never imports application code, so it runs the same forever.
// The last day (in the student's time zone) with study activity, which keeps `streak` honest: the streak grows on
// the first activity of a day that follows a study day, restarts after a missed day, and reads as 0 once lapsed.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('users').addColumn('last_study_date', 'date').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('users').dropColumn('last_study_date').execute();
}
