// The xp ledger (xp_awards) and users.xp, moved together. Amounts come from domain/xp.ts; this module makes each award
// count once: the student's lock is held (db/student-transaction.ts), so concurrent awards of one student apply one
// after the other (the daily cap cannot be overrun by a race), and the ledger's primary key (user_id, award_key)
// refuses a second award of the same thing, be it a retry, a race or a farm.
import { sql } from 'kysely';
import type { Db } from '../connect.ts';
import { executePrepared } from '../prepared-statements.ts';
import { lockStudent } from '../student-transaction.ts';
import { CAPPED_SOURCES, cappedAmount, isCapped, type XpClaim } from '../../domain/xp.ts';

/**
 * Awards `claim` once, inside the caller's transaction; returns the xp actually added (0 when the thing was awarded
 * before or the day's cap is reached). A claim that earns 0 is still recorded, so it cannot earn later either.
 */
export async function awardXp(trx: Db, userId: string, claim: XpClaim, at: Date): Promise<number> {
  await lockStudent(trx, userId);
  const seen = await executePrepared(
    trx,
    trx.selectFrom('xp_awards').select('amount').where('user_id', '=', userId).where('award_key', '=', claim.key),
  );
  if (seen.length > 0) return 0;
  const amount = isCapped(claim.source)
    ? cappedAmount(claim.amount, await cappedToday(trx, userId, claim.localDate))
    : claim.amount;
  await trx
    .insertInto('xp_awards')
    .values({
      user_id: userId,
      award_key: claim.key,
      source: claim.source,
      amount,
      local_date: claim.localDate,
      awarded_at: at,
    })
    .execute();
  if (amount > 0)
    await trx
      .updateTable('users')
      .set({ xp: sql<number>`xp + ${amount}` })
      .where('id', '=', userId)
      .execute();
  return amount;
}

async function cappedToday(trx: Db, userId: string, localDate: string): Promise<number> {
  const row = await trx
    .selectFrom('xp_awards')
    .select(sql<number>`coalesce(sum(amount), 0)::int`.as('total'))
    .where('user_id', '=', userId)
    .where('local_date', '=', localDate)
    .where('source', 'in', CAPPED_SOURCES)
    .executeTakeFirstOrThrow();
  return Number(row.total);
}
