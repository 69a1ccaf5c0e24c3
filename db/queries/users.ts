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

/** Puts an account on the contract plan with its own limits; returns its id (undefined: no such e-mail). */
export async function setContractPlan(db: Db, email: string, limits: { per_minute: number; per_day: number; ai_per_hour: number }) {
  const row = await db
    .updateTable('users')
    .set({ plan: 'contract', contract_per_minute: limits.per_minute, contract_per_day: limits.per_day, contract_ai_per_hour: limits.ai_per_hour })
    .where('email', '=', email)
    .returning('id')
    .executeTakeFirst();
  return row?.id;
}
