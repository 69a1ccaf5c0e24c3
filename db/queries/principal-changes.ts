// The notification every writer of what a general principal is read from (db/queries/principals.ts: grants,
// personal keys, an account's plan, time zone and country) sends with its commit, so that every process drops the
// principals it keeps of that account (server/auth/authenticate-general.ts) before its next request.
import { notifyOnCommit } from '../notifications.ts';
import type { Db } from '../connect.ts';

/** Notified (payload: the account's id) when a grant, personal key, plan, time zone or country of an account changes. */
export const PRINCIPALS_CHANNEL = 'general_principals';

type Listener = (userId: string) => void;
const committedHere = new WeakMap<Db, Set<Listener>>();

/**
 * Calls `listener` with each account a transaction of `changingPrincipals` on `db` changed, as soon as it commits
 * here: the process that made a change (a student revoking a grant) drops it before it answers, without waiting for
 * its own NOTIFY, so the student's next request is refused even if it overtakes the notification.
 */
export function onPrincipalsCommitted(db: Db, listener: Listener): void {
  committedHere.set(db, (committedHere.get(db) ?? new Set<Listener>()).add(listener));
}

/** The accounts each open transaction of `changingPrincipals` changed, to tell this process's listeners at its commit. */
const changedIn = new WeakMap<Db, string[]>();

/**
 * Runs `change` in a new transaction of `db` and, for each account it reports through `changed`, notifies
 * PRINCIPALS_CHANNEL within that transaction (sent with its commit, never for a rollback), and tells this process's
 * listeners once it has committed. Called with a transaction that `changingPrincipals` opened (a payment that changes
 * the plan among other writes), it joins it: the accounts are told at that transaction's commit. Any other
 * transaction is refused: its commit is not ours to see, so this process could answer the next request with what it
 * kept from before the change, until the NOTIFY came back to it.
 */
export async function changingPrincipals<T>(
  db: Db,
  change: (trx: Db, changed: (userId: string) => Promise<void>) => Promise<T>,
): Promise<T> {
  const run = (trx: Db, accounts: string[]) =>
    change(trx, async (userId) => {
      accounts.push(userId);
      await notifyOnCommit(trx, PRINCIPALS_CHANNEL, userId);
    });
  if (db.isTransaction) {
    const accounts = changedIn.get(db);
    if (!accounts) throw new Error('changingPrincipals joins only a transaction that changingPrincipals opened');
    return run(db, accounts);
  }
  const accounts: string[] = [];
  const result = await db.transaction().execute((trx) => {
    changedIn.set(trx, accounts);
    return run(trx, accounts);
  });
  for (const listener of committedHere.get(db) ?? []) for (const userId of accounts) listener(userId);
  return result;
}
