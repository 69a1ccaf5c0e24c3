// One account export at a time per student, whichever process serves it: a download holds the student's lease row
// (export_leases) from before it reads anything until it ends. The lease has an expiry that its holder renews while
// the download lasts, so a process that dies mid-download (no chance to delete its row) blocks the student's next
// export for at most one lease time. The database's clock alone decides expiry: processes' clocks may differ.
import { sql } from 'kysely';
import type { Db } from '../connect.ts';

export type LeaseTaken = { taken: true } | { taken: false; retryAfterSeconds: number };

/**
 * Takes the student's export lease for `holder` for `seconds`, unless another holder's lease has not expired; then
 * says in how many seconds it expires (at least 1).
 */
export async function takeExportLease(db: Db, userId: string, holder: string, seconds: number): Promise<LeaseTaken> {
  const taken = await db
    .insertInto('export_leases')
    .values({ user_id: userId, holder, expires_at: sql<Date>`now() + make_interval(secs => ${seconds})` })
    .onConflict((oc) =>
      oc
        .column('user_id')
        .doUpdateSet({
          holder,
          expires_at: sql<Date>`now() + make_interval(secs => ${seconds})`,
          taken_at: sql<Date>`now()`,
        })
        .where('export_leases.expires_at', '<=', sql<Date>`now()`),
    )
    .returning('holder')
    .executeTakeFirst();
  if (taken) return { taken: true };
  const held = await db
    .selectFrom('export_leases')
    .select(sql<number>`ceil(extract(epoch from expires_at - now()))::int`.as('seconds'))
    .where('user_id', '=', userId)
    .executeTakeFirst();
  // Gone in between (its download ended): a retry at once will find it free.
  return { taken: false, retryAfterSeconds: Math.max(1, Math.min(seconds, held?.seconds ?? 1)) };
}

/** Extends the holder's lease by `seconds` from now; false when it is no longer its own (it expired and was taken). */
export async function renewExportLease(db: Db, userId: string, holder: string, seconds: number): Promise<boolean> {
  const renewed = await db
    .updateTable('export_leases')
    .set({ expires_at: sql<Date>`now() + make_interval(secs => ${seconds})` })
    .where('user_id', '=', userId)
    .where('holder', '=', holder)
    .executeTakeFirst();
  return renewed.numUpdatedRows > 0n;
}

/** Ends the holder's lease; another holder's lease is left alone. */
export async function releaseExportLease(db: Db, userId: string, holder: string): Promise<void> {
  await db.deleteFrom('export_leases').where('user_id', '=', userId).where('holder', '=', holder).execute();
}
