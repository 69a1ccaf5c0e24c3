// The one way a write to a student's data starts its transaction. Every such write takes the student's lock first (a
// row lock on the student's users row), so all the locks it takes after that — the task or card it changes, the xp
// ledger, the streak, the readiness version, the outbox, the stats deltas — come one writer of that student at a
// time, and two writes of one student can no longer wait on each other in a cycle. Without it, two closes of two
// tasks each took a key-share lock on the student's row (the outbox's foreign key) and then both asked for the row
// itself (xp, readiness): a deadlock, and a 500 for the loser.
//
// The lock is FOR NO KEY UPDATE: it serialises the student's writers but does not wait for, nor hold up, the
// key-share locks that foreign keys take on the row (a sign-in inserting a grant, a delivery recording its attempt).
// Writes of different students never share it. Should the server still abort a transaction as a deadlock or a
// serialization failure (a path that forgot the helper, an operator's psql), the whole transaction runs once more;
// a second abort propagates, and the server answers 503 with Retry-After (server/http/problems.ts), never 500.
import { sql } from 'kysely';
import type { Db } from './connect.ts';
import { executePrepared } from './prepared-statements.ts';
import { isSerializationFailure } from './errors.ts';

/** Runs of one transaction: the first and one retry after a deadlock or serialization failure. */
export const STUDENT_TRANSACTION_ATTEMPTS = 2;

/**
 * Runs `work` in a transaction that holds the student's lock from its first statement. `work` may run twice (see
 * above): it must not have effects outside the transaction. Inside a transaction already, it takes the lock there
 * and runs once (the outer transaction owns the retry).
 */
export async function studentTransaction<T>(db: Db, userId: string, work: (trx: Db) => Promise<T>): Promise<T> {
  return retriedTransaction(db, async (trx) => {
    await lockStudent(trx, userId);
    return work(trx);
  });
}

/**
 * A transaction run once more when the server aborts it as a deadlock or a serialization failure. For a writer that
 * must do something that never waits before it takes the student's lock (an Idempotency-Key's try-lock, which answers
 * 409 at once rather than queue behind the request holding it); any other writer uses studentTransaction. Inside a
 * transaction already, `work` runs there, once.
 */
export async function retriedTransaction<T>(db: Db, work: (trx: Db) => Promise<T>): Promise<T> {
  if (db.isTransaction) return work(db);
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction().execute(work);
    } catch (error) {
      if (attempt >= STUDENT_TRANSACTION_ATTEMPTS || !isSerializationFailure(error)) throw error;
    }
  }
}

/** The students each open transaction has locked (a transaction's object lives as long as the transaction). */
const lockedIn = new WeakMap<Db, Set<string>>();

/**
 * Locks the student's row until the transaction ends. Asking again later in the same transaction (awarding xp,
 * moving readiness) sends nothing: the lock is held already, and each statement was a round trip of every write. No
 * savepoint is ever rolled back here, so a lock once taken stays until the transaction ends. Outside a transaction
 * the statement runs every time (it then locks nothing beyond itself).
 */
export async function lockStudent(trx: Db, userId: string): Promise<void> {
  const locked = trx.isTransaction ? lockedIn.get(trx) : undefined;
  if (locked?.has(userId)) return;
  await executePrepared(trx, sql`select 1 from users where id = ${userId} for no key update`);
  studentLocked(trx, userId);
}

/**
 * Records that a statement of the transaction took the student's lock (FOR NO KEY UPDATE of the student's users row)
 * as its first lock, together with what it read (a graded review's card, db/queries/flashcards.ts): later
 * lockStudent calls of the transaction then send nothing.
 */
export function studentLocked(trx: Db, userId: string): void {
  if (trx.isTransaction) lockedIn.set(trx, (lockedIn.get(trx) ?? new Set()).add(userId));
}
