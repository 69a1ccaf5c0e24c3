// What /api/v1/stats would answer if it counted the tables whole, as it did before its maintained counters
// (db/queries/stats.ts): the reference the counters are checked against.
import { sql } from 'kysely';
import type { Db } from '../../db/connect.ts';

export async function statsByCounting(db: Db, activeSince: Date): Promise<Record<string, number>> {
  const { rows } = await sql<Record<string, number>>`select
    (select count(*) from users) as total_users,
    (select count(*) from users where last_active_at >= ${activeSince}) as active_users_30d,
    (select count(*) from universities) as universities_count,
    (select count(*) from flashcard_decks) as flashcard_decks,
    (select count(*) from ai_messages) as ai_messages_total,
    (select count(*) from study_rooms) as study_rooms_total`.execute(db);
  return rows[0]!;
}
