// The stored JWT signing keys (server/auth/signing-key-store.ts), on PostgreSQL: one row per key, private half sealed.
import type { Db } from '../connect.ts';

export interface SigningKeyRow {
  kid: string;
  private_key_sealed: string;
  created_at: Date;
  retired_at: Date | null;
}

/** Keys that sign or still verify: not retired, or retired after `retiredSince`; newest first. */
export async function listSigningKeys(db: Db, retiredSince: Date): Promise<SigningKeyRow[]> {
  return db
    .selectFrom('signing_keys')
    .select(['kid', 'private_key_sealed', 'created_at', 'retired_at'])
    .where((eb) => eb.or([eb('retired_at', 'is', null), eb('retired_at', '>', retiredSince)]))
    .orderBy('created_at', 'desc')
    .orderBy('kid')
    .execute();
}

/** Adds `key`, which signs from now on: the others are retired at `now`, and keys retired before `forgetBefore` deleted. */
export async function rotateSigningKeys(
  db: Db,
  key: { kid: string; private_key_sealed: string },
  now: Date,
  forgetBefore: Date,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('signing_keys').where('retired_at', '<', forgetBefore).execute();
    await trx.updateTable('signing_keys').set({ retired_at: now }).where('retired_at', 'is', null).execute();
    await trx
      .insertInto('signing_keys')
      .values({ ...key, created_at: now })
      .execute();
  });
}

/** Adds keys as they are, retired or not (keys kept in DATA_DIR, moved into the database). */
export async function insertSigningKeys(db: Db, keys: SigningKeyRow[]): Promise<void> {
  if (keys.length > 0) await db.insertInto('signing_keys').values(keys).execute();
}
