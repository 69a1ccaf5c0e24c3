import { notifyOnCommit } from '../notifications.ts';
import type { Db } from '../connect.ts';
import { changingPrincipals } from './principal-changes.ts';

/** Notified (payload: the key's prefix) when a partner key is revoked: processes drop the keys they keep. */
export const PARTNER_KEYS_CHANNEL = 'partner_keys';

export interface ApiKeyRecord {
  id: string;
  prefix: string;
  name: string;
  per_minute: number;
  per_day: number;
}

export { DEFAULT_KEY_LIMITS } from './api-key-defaults.ts';

export async function insertApiKey(
  db: Db,
  key: { prefix: string; key_hash: string; name: string; per_minute: number; per_day: number },
): Promise<ApiKeyRecord> {
  return db
    .insertInto('api_keys')
    .values(key)
    .returning(['id', 'prefix', 'name', 'per_minute', 'per_day'])
    .$narrowType<{ per_minute: number; per_day: number }>()
    .executeTakeFirstOrThrow();
}

/** The partner key with this hash, unless it was revoked. A personal key is not a partner key. */
export async function findActiveApiKey(db: Db, keyHash: string): Promise<ApiKeyRecord | undefined> {
  return db
    .selectFrom('api_keys')
    .select(['id', 'prefix', 'name', 'per_minute', 'per_day'])
    .where('key_hash', '=', keyHash)
    .where('revoked_at', 'is', null)
    .where('user_id', 'is', null)
    .$narrowType<{ per_minute: number; per_day: number }>()
    .executeTakeFirst();
}

/** Whether an active key with this hash belongs to a partner or to a student, to tell a caller who used it on the wrong surface. */
export async function findActiveKeyKind(db: Db, keyHash: string): Promise<'partner' | 'personal' | undefined> {
  const row = await db
    .selectFrom('api_keys')
    .select('user_id')
    .where('key_hash', '=', keyHash)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return row ? (row.user_id === null ? 'partner' : 'personal') : undefined;
}

/** Partner keys, for operators. */
export async function listApiKeys(db: Db) {
  return db
    .selectFrom('api_keys')
    .select(['prefix', 'name', 'per_minute', 'per_day', 'created_at', 'last_used_at', 'revoked_at'])
    .where('user_id', 'is', null)
    .orderBy('created_at')
    .orderBy('prefix')
    .execute();
}

/**
 * Revokes the key with this prefix, and tells every process once it is done; false when no active key has it. A
 * student's personal key with this prefix is revoked too (operators may stop one), and its account's principals
 * dropped.
 */
export async function revokeApiKey(db: Db, prefix: string): Promise<boolean> {
  return changingPrincipals(db, async (trx, changed) => {
    const row = await trx
      .updateTable('api_keys')
      .set({ revoked_at: new Date() })
      .where('prefix', '=', prefix)
      .where('revoked_at', 'is', null)
      .returning('user_id')
      .executeTakeFirst();
    if (!row) return false;
    if (row.user_id) await changed(row.user_id);
    else await notifyOnCommit(trx, PARTNER_KEYS_CHANNEL, prefix);
    return true;
  });
}

export async function markApiKeyUsed(db: Db, id: string, at: Date): Promise<void> {
  await db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
}
