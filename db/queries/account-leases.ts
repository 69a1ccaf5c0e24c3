// The resources accounts hold now, one leased row each (db/migrations/20261206_0301_account_leases.ts): the count
// behind each per-account bound on something held over time (open streams, exports, AI replies), shared by every
// process. Times are the database's clock, the one all processes share.
import { sql } from 'kysely';
import type { Db } from '../connect.ts';

export interface LeaseRow {
  /** Chosen by the caller, so that it knows the lease before its row is written. */
  id: string;
  user_id: string;
  kind: string;
  grp: string | null;
  grant_id: string | null;
  key_id: string | null;
}

export interface LeaseBound {
  /** Live leases of the kind one account may hold. */
  limit: number;
  /** Live leases of the kind and group one account may hold; undefined: only `limit` counts. */
  perGroup?: number | undefined;
  leaseMs: number;
}

/**
 * The lease's row was written; or the account (`account`) or the group (`group`) holds its bound of live leases
 * already (and how long until the first of them lapses); or the credential that asked no longer stands.
 */
export type Taken = { taken: true } | { refused: 'account' | 'group'; retryAfterMs: number } | { unauthorized: true };

/**
 * Takes a lease for `row`'s account unless the bound is reached, or `stands` says that its credential no longer does
 * (checked inside: a revocation that commits later is announced later). The account's advisory lock puts concurrent
 * takes of one account in line, so that two processes cannot both take the last place; other accounts never wait for
 * it. Lapsed leases are not counted.
 *
 * An account that is full is told so by one plain count first, without a transaction or the lock: a refusal, the
 * usual answer to a client that opens streams in a loop, then holds a connection for one statement and waits for no
 * other take of the account. The locked count decides whenever a place may be free.
 */
export async function takeLeaseIfRoom(
  db: Db,
  row: LeaseRow,
  bound: LeaseBound,
  stands: (trx: Db) => Promise<boolean>,
): Promise<Taken> {
  const full = await refusalIfFull(db, row, bound);
  if (full) return full;
  return db.transaction().execute(async (trx): Promise<Taken> => {
    await sql`select pg_advisory_xact_lock(hashtextextended(${`account_leases:${row.user_id}`}, 0))`.execute(trx);
    if (!(await stands(trx))) return { unauthorized: true };
    const refused = await refusalIfFull(trx, row, bound);
    if (refused) return refused;
    await trx
      .insertInto('account_leases')
      .values({ ...row, expires_at: leaseEnd(bound.leaseMs) })
      .execute();
    return { taken: true };
  });
}

/** The refusal when the account, or the lease's group, holds its bound of live leases of the kind. */
async function refusalIfFull(
  db: Db,
  row: LeaseRow,
  bound: LeaseBound,
): Promise<Exclude<Taken, { taken: true } | { unauthorized: true }> | undefined> {
  const groupBound = row.grp !== null && bound.perGroup !== undefined;
  const live = await db
    .selectFrom('account_leases')
    .select((eb) => [
      eb.fn.countAll<number | string>().as('count'),
      sql<number | string>`count(*) filter (where grp is not distinct from ${row.grp})`.as('in_group'),
      sql<number | string | null>`extract(epoch from min(expires_at) - statement_timestamp()) * 1000`.as('first_ms'),
      sql<
        number | string | null
      >`extract(epoch from min(expires_at) filter (where grp is not distinct from ${row.grp}) - statement_timestamp()) * 1000`.as(
        'first_in_group_ms',
      ),
    ])
    .where('user_id', '=', row.user_id)
    .where('kind', '=', row.kind)
    .where('expires_at', '>', sql<Date>`statement_timestamp()`)
    .executeTakeFirstOrThrow();
  if (groupBound && Number(live.in_group) >= bound.perGroup!)
    return { refused: 'group', retryAfterMs: Math.max(0, Number(live.first_in_group_ms ?? 0)) };
  if (Number(live.count) >= bound.limit)
    return { refused: 'account', retryAfterMs: Math.max(0, Number(live.first_ms ?? 0)) };
  return undefined;
}

/**
 * Pushes the leases still live forward by `leaseMs`, in one statement; returns the ids renewed. A missing one was
 * deleted (by a revocation, or swept) or has lapsed: a lapsed lease is never renewed, since its place may have been
 * taken by another once it stopped counting.
 */
export async function renewLeases(db: Db, ids: readonly string[], leaseMs: number): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .updateTable('account_leases')
    .set({ expires_at: leaseEnd(leaseMs) })
    .where('id', 'in', ids)
    .where('expires_at', '>', sql<Date>`statement_timestamp()`)
    .returning('id')
    .execute();
  return new Set(rows.map((row) => row.id));
}

/** The resource was given back: its place is free. */
export async function releaseLease(db: Db, id: string): Promise<void> {
  await db.deleteFrom('account_leases').where('id', '=', id).execute();
}

/** Deletes the leases that lapsed: those of processes that died, whichever account they were of. */
export async function deleteLapsedLeases(db: Db): Promise<number> {
  const result = await db
    .deleteFrom('account_leases')
    .where('expires_at', '<=', sql<Date>`statement_timestamp()`)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** The live leases taken through the grants: by their access tokens, or by personal keys minted through them. */
export async function leasesOfGrants(db: Db, grantIds: readonly string[]): Promise<number> {
  if (grantIds.length === 0) return 0;
  const row = await db
    .selectFrom('account_leases')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('grant_id', 'in', grantIds)
    .where('expires_at', '>', sql<Date>`statement_timestamp()`)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/**
 * Frees the places the grants' leases hold, in the transaction that revokes them (db/queries/grant-artifacts.ts).
 * Their holders end in every process as soon as the revocation's notification arrives (services/leases/); a process
 * that misses it ends them at its next renewal, which finds their rows gone.
 */
export async function releaseLeasesOfGrants(trx: Db, grantIds: readonly string[]): Promise<number> {
  if (grantIds.length === 0) return 0;
  const result = await trx.deleteFrom('account_leases').where('grant_id', 'in', grantIds).executeTakeFirst();
  return Number(result.numDeletedRows);
}

function leaseEnd(leaseMs: number) {
  return sql<Date>`statement_timestamp() + ${Math.round(leaseMs)}::int * interval '1 millisecond'`;
}
