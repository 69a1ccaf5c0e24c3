// A student's personal API keys. Every query is scoped to the owner: another student's key id finds nothing.
import type { Db } from '../connect.ts';

const LISTED_COLUMNS = ['id', 'prefix', 'name', 'scopes', 'created_at', 'last_used_at'] as const;

export async function insertPersonalKey(db: Db, key: { id?: string; user_id: string; prefix: string; key_hash: string; name: string; scopes: string[] }) {
  return db.insertInto('api_keys').values(key).returning(LISTED_COLUMNS).$narrowType<{ scopes: string[] }>().executeTakeFirstOrThrow();
}

export async function listPersonalKeys(db: Db, userId: string) {
  return db
    .selectFrom('api_keys')
    .select(LISTED_COLUMNS)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .$narrowType<{ scopes: string[] }>()
    .execute();
}

/** False when the student has no active key with this id. */
export async function revokePersonalKey(db: Db, userId: string, keyId: string, now: Date): Promise<boolean> {
  const result = await db
    .updateTable('api_keys')
    .set({ revoked_at: now })
    .where('id', '=', keyId)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
