import { sql } from 'kysely';
import type { Db } from '../connect.ts';
import { executePrepared } from '../prepared-statements.ts';
import type { PlanColumns } from '../../domain/plans.ts';
import { changingPrincipals } from './principal-changes.ts';

/** The public fields of a user (and the plan its tier is shown from), found by nickname regardless of case (backed by the lower(nickname) index). */
export async function findPublicProfile(db: Db, nickname: string) {
  const [profile] = await executePrepared(
    db,
    db
      .selectFrom('users')
      .select(['nickname', 'first_name', 'avatar_url', 'bio', 'xp', 'plan'])
      .select(sql<string>`to_char(created_at at time zone 'UTC', 'YYYY-MM-DD')`.as('joined_at'))
      .where(sql`lower(nickname)`, '=', nickname.toLowerCase()),
  );
  return profile;
}

/** Puts an account on the contract plan with its own limits; returns its id (undefined: no such e-mail). */
export async function setContractPlan(
  db: Db,
  email: string,
  limits: { per_minute: number; per_day: number; ai_per_hour: number },
) {
  return changingPrincipals(db, async (trx, changed) => {
    const row = await trx
      .updateTable('users')
      .set({
        plan: 'contract',
        contract_per_minute: limits.per_minute,
        contract_per_day: limits.per_day,
        contract_ai_per_hour: limits.ai_per_hour,
      })
      .where('email', '=', email)
      .returning('id')
      .executeTakeFirst();
    if (row) await changed(row.id);
    return row?.id;
  });
}

/** An account's id and plan columns by e-mail (case-insensitive), for operators' commands. */
export async function findAccountPlan(db: Db, email: string) {
  return db
    .selectFrom('users')
    .select(['id', 'plan', 'contract_per_minute', 'contract_per_day', 'contract_ai_per_hour'])
    .where(sql`lower(email)`, '=', email.toLowerCase())
    .executeTakeFirst();
}

/** An account's id and plan columns by id, locked until the transaction ends (a payment changes the plan). */
export async function lockAccountPlan(db: Db, userId: string) {
  return db
    .selectFrom('users')
    .select(['id', 'plan', 'contract_per_minute', 'contract_per_day', 'contract_ai_per_hour'])
    .where('id', '=', userId)
    .forUpdate()
    .executeTakeFirst();
}

/** Writes the plan columns; the next request of the account sees the new limits (the commit drops kept principals). */
export async function setPlan(db: Db, userId: string, columns: PlanColumns, now: Date): Promise<void> {
  await changingPrincipals(db, async (trx, changed) => {
    await trx
      .updateTable('users')
      .set({ ...columns, updated_at: now })
      .where('id', '=', userId)
      .execute();
    await changed(userId);
  });
}

/** The account a payment provider's event names: by id when it gives one, else by e-mail (case-insensitive). */
export async function findNamedAccount(db: Db, named: { account_id: string } | { email: string }) {
  return db
    .selectFrom('users')
    .select('id')
    .where((eb) =>
      'account_id' in named ? eb('id', '=', named.account_id) : eb(sql`lower(email)`, '=', named.email.toLowerCase()),
    )
    .executeTakeFirst();
}

/** The stored password hash of an account, to confirm the student's password before a sensitive change. */
export async function findPasswordHash(db: Db, userId: string): Promise<string | null | undefined> {
  const row = await db.selectFrom('users').select('password_hash').where('id', '=', userId).executeTakeFirst();
  return row?.password_hash;
}

export async function setPasswordHash(db: Db, userId: string, passwordHash: string, now: Date): Promise<void> {
  await db
    .updateTable('users')
    .set({ password_hash: passwordHash, updated_at: now })
    .where('id', '=', userId)
    .execute();
}

/**
 * Deletes the account; the foreign keys erase everything of the student at once (on delete cascade) but payments,
 * which they keep without the link (on delete set null), and the study rooms, which the student leaves first by
 * `leaveRooms` (services/rooms/leaving.ts leaveEveryRoom: the others are told, an owned room passes on within the
 * bound or closes). False when it was gone already.
 */
export async function deleteAccount(db: Db, userId: string, leaveRooms: (trx: Db) => Promise<void>): Promise<boolean> {
  return changingPrincipals(db, async (trx, changed) => {
    await leaveRooms(trx);
    const result = await trx.deleteFrom('users').where('id', '=', userId).executeTakeFirst();
    if (result.numDeletedRows === 0n) return false;
    await changed(userId);
    return true;
  });
}
