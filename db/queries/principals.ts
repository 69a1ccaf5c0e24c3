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
