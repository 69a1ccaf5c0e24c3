// The streams open now, one leased row each (db/migrations/20261127_0401_open_streams.ts): the count behind the bound
// on an account's open streams, shared by every process. Times are the database's clock, the one all processes share.
import { sql } from 'kysely';
import type { Db } from '../connect.ts';

export interface OpenStreamRow {
  /** Chosen by the caller, so that it knows the stream before its row is written. */
  id: string;
  user_id: string;
  kind: string;
  grant_id: string | null;
  key_id: string | null;
}

/**
 * The stream's row was written; or the account holds `max` live streams already (and how long until the first lease
 * lapses); or the credential that asked no longer stands.
 */
export type Opened = { opened: true } | { refused: true; retryAfterMs: number } | { unauthorized: true };

/**
 * Takes a place for a stream of `holder`'s account unless it holds `max` live streams, or `stands` says that its
 * credential no longer does (checked inside: a revocation that commits later is announced later). The account's advisory lock
 * puts concurrent opens of one account in line, so that two processes cannot both take the last place; other
 * accounts never wait for it. Leases that have lapsed (their process died) are deleted on the way.
 *
 * An account that is full is told so by one plain count first, without a transaction or the lock: a refusal, the
 * usual answer to a client that opens streams in a loop, then holds a connection for one statement and waits for no
 * other open of the account. The locked count decides whenever a place may be free.
 */
export async function openStreamIfRoom(
  db: Db,
  holder: OpenStreamRow,
  limits: { max: number; leaseMs: number },
  stands: (trx: Db) => Promise<boolean>,
): Promise<Opened> {
  const full = await refusalIfFull(db, holder.user_id, limits.max);
  if (full) return full;
  return db.transaction().execute(async (trx): Promise<Opened> => {
    await sql`select pg_advisory_xact_lock(hashtextextended(${`open_streams:${holder.user_id}`}, 0))`.execute(trx);
    if (!(await stands(trx))) return { unauthorized: true };
    await trx
      .deleteFrom('open_streams')
      .where('user_id', '=', holder.user_id)
      .where('expires_at', '<=', sql<Date>`statement_timestamp()`)
      .execute();
    const refused = await refusalIfFull(trx, holder.user_id, limits.max);
    if (refused) return refused;
    await trx
      .insertInto('open_streams')
      .values({ ...holder, expires_at: leaseEnd(limits.leaseMs) })
      .execute();
    return { opened: true };
  });
}

/** The refusal when the account holds `max` live streams (and how long until the first of their leases lapses). */
async function refusalIfFull(
  db: Db,
  userId: string,
  max: number,
): Promise<Extract<Opened, { refused: true }> | undefined> {
  const live = await db
    .selectFrom('open_streams')
    .select((eb) => [
      eb.fn.countAll<number | string>().as('count'),
      sql<number | string | null>`extract(epoch from min(expires_at) - statement_timestamp()) * 1000`.as(
        'first_lapse_ms',
      ),
    ])
    .where('user_id', '=', userId)
    .where('expires_at', '>', sql<Date>`statement_timestamp()`)
    .executeTakeFirstOrThrow();
  return Number(live.count) >= max
    ? { refused: true, retryAfterMs: Math.max(0, Number(live.first_lapse_ms ?? 0)) }
    : undefined;
}

/** Pushes the leases of the streams still open forward; returns the ids renewed (a missing one was deleted). */
export async function renewStreams(db: Db, ids: readonly string[], leaseMs: number): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .updateTable('open_streams')
    .set({ expires_at: leaseEnd(leaseMs) })
    .where('id', 'in', ids)
    .returning('id')
    .execute();
  return new Set(rows.map((row) => row.id));
}

/** The stream ended: its place is free. */
export async function closeStream(db: Db, id: string): Promise<void> {
  await db.deleteFrom('open_streams').where('id', '=', id).execute();
}

/** Deletes the leases that lapsed: the streams of processes that died, whichever account they were of. */
export async function deleteLapsedStreams(db: Db): Promise<void> {
  await db
    .deleteFrom('open_streams')
    .where('expires_at', '<=', sql<Date>`statement_timestamp()`)
    .execute();
}

/** The live streams opened through the grants: by their access tokens, or by personal keys minted through them. */
export async function openStreamsOfGrants(db: Db, grantIds: readonly string[]): Promise<number> {
  if (grantIds.length === 0) return 0;
  const row = await db
    .selectFrom('open_streams')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('grant_id', 'in', grantIds)
    .where('expires_at', '>', sql<Date>`statement_timestamp()`)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/**
 * Frees the places of the streams the grants hold, in the transaction that revokes them (db/queries/grant-artifacts.ts).
 * The streams themselves end in every process as soon as the revocation's notification arrives
 * (services/streams/open-streams.ts); a process that misses it ends them at its next renewal, which finds their rows gone.
 */
export async function releaseStreamsOfGrants(trx: Db, grantIds: readonly string[]): Promise<number> {
  if (grantIds.length === 0) return 0;
  const result = await trx.deleteFrom('open_streams').where('grant_id', 'in', grantIds).executeTakeFirst();
  return Number(result.numDeletedRows);
}

function leaseEnd(leaseMs: number) {
  return sql<Date>`statement_timestamp() + ${Math.round(leaseMs)}::int * interval '1 millisecond'`;
}
