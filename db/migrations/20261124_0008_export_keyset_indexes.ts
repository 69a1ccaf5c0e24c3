// Frozen in time: a migration never imports application code, so it runs the same forever.
// The account export reads each table of one student in pages by id (`user_id = $1 and id > $2 order by id limit n`).
// The tables a student can fill by the thousand had only indexes by time, so each page sorted all of the student's
// rows again: 100,000 tasks took minutes. An index on (user_id, id) makes each page one index range scan.
import type { Kysely } from 'kysely';

const TABLES = ['tasks', 'flashcard_cards', 'flashcard_reviews', 'ai_messages'] as const;

export async function up(db: Kysely<any>): Promise<void> {
  for (const table of TABLES)
    await db.schema.createIndex(`${table}_user_id_idx`).on(table).columns(['user_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of TABLES) await db.schema.dropIndex(`${table}_user_id_idx`).execute();
}
