// Idempotency-Key for creating operations: run the work once per (student, key) and answer retries with the
// stored first response. The work and the stored response commit in one transaction, so neither exists without
// the other; it holds the student's lock as every write does (db/student-transaction.ts). A request with the same
// key still running holds a transaction-scoped advisory lock, and a second one meanwhile is refused with 409
// instead of waiting. Only successful responses are stored: a refused request rolls back and may be retried with
// the same key. Keys expire after KEY_LIFETIME_MS.
import { createHash } from 'node:crypto';
import type { Db } from '../../db/connect.ts';
import { lockStudent, retriedTransaction, studentTransaction } from '../../db/student-transaction.ts';
import {
  deleteExpiredIdempotencyKeys,
  findIdempotencyKey,
  insertIdempotencyKey,
  tryLockIdempotencyKey,
} from '../../db/queries/idempotency.ts';
import { problems } from './problems.ts';

export const KEY_LIFETIME_MS = 24 * 60 * 60_000;
export const REPLAYED_HEADER = 'Idempotent-Replayed';

export interface IdempotentRequest {
  userId: string;
  /** The Idempotency-Key header; without one the work simply runs in a transaction. */
  key: string | undefined;
  /** Part of the request's fingerprint, so one key cannot be replayed on another operation. */
  operationId: string;
  body: unknown;
  now: Date;
}

type Result = { status: number; body: unknown; headers?: Record<string, string> };

/**
 * `atomicAlone`: without a key, `work` is given the pool rather than a transaction, and makes its writes atomic itself
 * (a graded review: one statement in autocommit, services/flashcards/reviews.ts); with a key it runs in the key's
 * transaction as any work does, where it takes the student's lock itself with what it reads first.
 */
export async function idempotently<R extends Result>(
  db: Db,
  request: IdempotentRequest,
  work: (trx: Db) => Promise<R>,
  options: { atomicAlone?: boolean } = {},
): Promise<R> {
  const { key } = request;
  if (key === undefined) return options.atomicAlone ? work(db) : studentTransaction(db, request.userId, work);
  const requestHash = fingerprint(request.operationId, request.body);
  return retriedTransaction(db, async (trx) => {
    // The key's try-lock never waits, so it may come before the student's lock (db/student-transaction.ts), and a
    // second request with the key is told 409 at once instead of queueing behind the first.
    if (!(await tryLockIdempotencyKey(trx, idempotencyLockId(request.userId, key)))) {
      throw problems.conflict(
        'A request with this Idempotency-Key is still running; retry it once that one has finished.',
      );
    }
    await lockStudent(trx, request.userId);
    await deleteExpiredIdempotencyKeys(trx, request.userId, request.now);
    const stored = await findIdempotencyKey(trx, request.userId, key);
    if (stored) {
      if (stored.request_hash !== requestHash) throw problems.idempotencyKeyReused();
      // The stored response was produced by this operation (the hash covers the operationId), so it has R's shape.
      return {
        status: stored.response_status,
        body: stored.response_body,
        headers: { [REPLAYED_HEADER]: 'true' },
      } as unknown as R;
    }
    const result = await work(trx);
    await insertIdempotencyKey(trx, {
      user_id: request.userId,
      key,
      request_hash: requestHash,
      response_status: result.status,
      response_body: result.body,
      created_at: request.now,
      expires_at: new Date(request.now.getTime() + KEY_LIFETIME_MS),
    });
    return result;
  });
}

/** SHA-256 of the operation and the body as canonical JSON (object keys sorted), so key order does not matter. */
export function fingerprint(operationId: string, body: unknown): string {
  return createHash('sha256').update(operationId).update('\0').update(canonicalJson(body)).digest('hex');
}

export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** A signed 64-bit advisory lock id for one student's key. */
export function idempotencyLockId(userId: string, key: string): bigint {
  return createHash('sha256').update(userId).update('\0').update(key).digest().readBigInt64BE(0);
}
