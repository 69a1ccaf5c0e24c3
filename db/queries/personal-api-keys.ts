// A student's personal API keys. Every query is scoped to the owner: another student's key id finds nothing.
import type { Db } from '../connect.ts';
import { changingPrincipals } from './principal-changes.ts';

const LISTED_COLUMNS = ['id', 'prefix', 'name', 'scopes', 'created_at', 'last_used_at'] as const;

export async function insertPersonalKey(
  db: Db,
  key: {
    id?: string;
    user_id: string;
    prefix: string;
    key_hash: string;
    name: string;
    scopes: string[];
    grant_id?: string | null;
  },
) {
  return db
    .insertInto('api_keys')
    .values(key)
    .returning(LISTED_COLUMNS)
    .$narrowType<{ scopes: string[] }>()
    .executeTakeFirstOrThrow();
}

/**
 * The personal keys still in force: not revoked themselves, and not minted through an OAuth grant that was revoked
 * since (a key without a grant finds no row to join, so its `oauth_grants.revoked_at` reads null).
 */
export function activePersonalKeys(db: Db) {
  return db
    .selectFrom('api_keys')
    .leftJoin('oauth_grants', 'oauth_grants.id', 'api_keys.grant_id')
    .where('api_keys.revoked_at', 'is', null)
    .where('oauth_grants.revoked_at', 'is', null);
}

export async function listPersonalKeys(db: Db, userId: string) {
  return activePersonalKeys(db)
    .select(LISTED_COLUMNS.map((column) => `api_keys.${column}` as const))
    .where('api_keys.user_id', '=', userId)
    .orderBy('api_keys.created_at')
    .orderBy('api_keys.id')
    .$narrowType<{ scopes: string[] }>()
    .execute();
}

/** False when the student has no active key with this id. */
export async function revokePersonalKey(db: Db, userId: string, keyId: string, now: Date): Promise<boolean> {
  return changingPrincipals(db, async (trx, changed) => {
    const result = await trx
      .updateTable('api_keys')
      .set({ revoked_at: now })
      .where('id', '=', keyId)
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (result.numUpdatedRows === 0n) return false;
    await changed(userId);
    return true;
  });
}
