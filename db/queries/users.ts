import { sql } from 'kysely';
import type { Db } from '../connect.ts';

/** The public fields of a user, found by nickname regardless of case (backed by the lower(nickname) index). */
export async function findPublicProfile(db: Db, nickname: string) {
  return db
    .selectFrom('users')
    .select(['nickname', 'first_name', 'avatar_url', 'bio', 'xp', 'premium_tier'])
    .select(sql<string>`to_char(created_at at time zone 'UTC', 'YYYY-MM-DD')`.as('joined_at'))
    .where(sql`lower(nickname)`, '=', nickname.toLowerCase())
    .executeTakeFirst();
}
