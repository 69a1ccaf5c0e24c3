// The notification every writer of what a general principal is read from (db/queries/principals.ts: grants,
// personal keys, an account's plan, time zone and country) sends with its commit, so that every process drops the
// principals it keeps of that account (server/general/authenticate.ts) before its next request.
import { notifyOnCommit } from '../../server/events/notifications.ts';
import type { Db } from '../connect.ts';

/** Notified (payload: the account's id) when a grant, personal key, plan, time zone or country of an account changes. */
export const PRINCIPALS_CHANNEL = 'general_principals';

/**
 * Runs `change` in `db`'s transaction (or a new one) and, for each account it reports through `changed`, notifies
 * PRINCIPALS_CHANNEL within that transaction: sent with its commit, never for a rollback.
 */
export async function changingPrincipals<T>(db: Db, change: (trx: Db, changed: (userId: string) => Promise<void>) => Promise<T>): Promise<T> {
  const run = (trx: Db) => change(trx, (userId) => notifyOnCommit(trx, PRINCIPALS_CHANNEL, userId));
  return db.isTransaction ? run(db) : db.transaction().execute(run);
}
