// What authentication needs to know about the student behind a credential: the grant or key must still be active
// (so revocation takes effect at once), and the plan sets the limits. Each process keeps what these queries found
// until a change to any of it commits: every writer of these rows and columns notifies (principal-changes.ts).
import type { Db } from '../connect.ts';
import { activePersonalKeys } from './personal-api-keys.ts';

const ACCOUNT_COLUMNS = [
  'users.id as user_id',
  'users.plan',
  'users.contract_per_minute',
  'users.contract_per_day',
  'users.contract_ai_per_hour',
  'users.time_zone',
  'users.country_code',
] as const;

/** The account behind an access token, if its grant is still active. */
export async function findGrantAccount(db: Db, grantId: string, userId: string) {
  return db
    .selectFrom('oauth_grants')
    .innerJoin('users', 'users.id', 'oauth_grants.user_id')
    .select(ACCOUNT_COLUMNS)
    .where('oauth_grants.id', '=', grantId)
    .where('oauth_grants.user_id', '=', userId)
    .where('oauth_grants.revoked_at', 'is', null)
    .executeTakeFirst();
}

/** The personal key with this hash and its account, unless the key (or the grant it was minted through) was revoked. */
export async function findPersonalKeyAccount(db: Db, keyHash: string) {
  return activePersonalKeys(db)
    .innerJoin('users', 'users.id', 'api_keys.user_id')
    .select(ACCOUNT_COLUMNS)
    .select(['api_keys.id as key_id', 'api_keys.prefix', 'api_keys.scopes', 'api_keys.grant_id'])
    .where('api_keys.key_hash', '=', keyHash)
    .$narrowType<{ scopes: string[] }>()
    .executeTakeFirst();
}

/**
 * Which of an account's credentials still stand: the account itself, the grants (of access tokens) not revoked, and
 * the personal keys still in force (neither revoked nor minted through a grant revoked since). For work that outlives
 * the request that authenticated it (an open stream), checked again whenever the account's principals change.
 */
export async function standingCredentials(
  db: Db,
  userId: string,
  ids: { grantIds: readonly string[]; keyIds: readonly string[] },
) {
  const account = await db.selectFrom('users').select('id').where('id', '=', userId).executeTakeFirst();
  if (!account) return { account: false, grantIds: new Set<string>(), keyIds: new Set<string>() };
  const grants =
    ids.grantIds.length === 0
      ? []
      : await db
          .selectFrom('oauth_grants')
          .select('id')
          .where('user_id', '=', userId)
          .where('id', 'in', ids.grantIds)
          .where('revoked_at', 'is', null)
          .execute();
  const keys =
    ids.keyIds.length === 0
      ? []
      : await activePersonalKeys(db)
          .select('api_keys.id')
          .where('api_keys.user_id', '=', userId)
          .where('api_keys.id', 'in', ids.keyIds)
          .execute();
  return { account: true, grantIds: new Set(grants.map((row) => row.id)), keyIds: new Set(keys.map((row) => row.id)) };
}
