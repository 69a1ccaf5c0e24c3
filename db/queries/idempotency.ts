// Stored first responses of idempotent requests (see server/http/idempotency.ts). Every function runs inside
// the request's transaction.
import { sql } from 'kysely';
import type { Db } from '../connect.ts';

/**
 * Takes the transaction-scoped advisory lock of one (student, key) pair without waiting; false when another
 * transaction holds it, i.e. a request with the same key is still running. Released at commit or rollback.
 */
export async function tryLockIdempotencyKey(trx: Db, lockId: bigint): Promise<boolean> {
  const { rows } = await sql<{
    locked: boolean;
  }>`select pg_try_advisory_xact_lock(${lockId.toString()}::bigint) as locked`.execute(trx);
  return rows[0]?.locked === true;
}

/** Forgets the student's expired keys, so an expired key is free again and the table stays small. */
export async function deleteExpiredIdempotencyKeys(trx: Db, userId: string, now: Date): Promise<void> {
  await trx.deleteFrom('idempotency_keys').where('user_id', '=', userId).where('expires_at', '<=', now).execute();
}

export async function findIdempotencyKey(trx: Db, userId: string, key: string) {
  return trx
    .selectFrom('idempotency_keys')
    .select(['request_hash', 'response_status', 'response_body'])
    .where('user_id', '=', userId)
    .where('key', '=', key)
    .executeTakeFirst();
}

export interface StoredResponse {
  user_id: string;
  key: string;
  request_hash: string;
  response_status: number;
  response_body: unknown;
  created_at: Date;
  expires_at: Date;
}

export async function insertIdempotencyKey(trx: Db, row: StoredResponse): Promise<void> {
  await trx
    .insertInto('idempotency_keys')
    .values({ ...row, response_body: JSON.stringify(row.response_body) })
    .execute();
}

export type KeptResponse = Pick<StoredResponse, 'key' | 'request_hash' | 'response_status' | 'response_body'>;

/**
 * Forgets the student's expired keys and reads those of `keys` still kept, in one statement (a batch's lookup: one
 * round trip for all its keys). The delete runs in the same statement as the read and is not seen by it, hence the
 * read's own test of `expires_at`.
 */
export async function purgeAndFindIdempotencyKeys(
  db: Db,
  userId: string,
  keys: readonly string[],
  now: Date,
): Promise<Map<string, KeptResponse>> {
  if (keys.length === 0) return new Map();
  const rows = await db
    .with('purged', (qc) =>
      qc.deleteFrom('idempotency_keys').where('user_id', '=', userId).where('expires_at', '<=', now).returning('key'),
    )
    .selectFrom('idempotency_keys')
    .select(['key', 'request_hash', 'response_status', 'response_body'])
    .where('user_id', '=', userId)
    .where('key', 'in', [...new Set(keys)])
    .where('expires_at', '>', now)
    .execute();
  return new Map(rows.map((row) => [row.key, row]));
}

/**
 * Stores responses whose keys are not stored yet, in one statement, and answers the keys it stored. A key that
 * another transaction is storing meanwhile waits for it: stored there, it is not stored here.
 */
export async function insertIdempotencyKeysIfAbsent(trx: Db, rows: readonly StoredResponse[]): Promise<Set<string>> {
  const inserted = await trx
    .insertInto('idempotency_keys')
    .values(rows.map((row) => ({ ...row, response_body: JSON.stringify(row.response_body) })))
    .onConflict((oc) => oc.columns(['user_id', 'key']).doNothing())
    .returning('key')
    .execute();
  return new Set(inserted.map((row) => row.key));
}
