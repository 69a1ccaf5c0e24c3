// The OAuth authorization server's records: clients, grants, authorization codes and refresh tokens. Codes and
// refresh tokens are stored as SHA-256 hashes only (they are long random strings, like API keys).
import { sql, type Insertable } from 'kysely';
import type { Db } from '../connect.ts';
import type { OauthClientsTable } from '../schema.ts';
import { GRANT_ARTIFACTS } from './grant-artifacts.ts';
import { changingPrincipals } from './principal-changes.ts';

/** A client the authorization server knows: a disabled one (`institutions revoke`) is no client any more. */
export async function findClient(db: Db, clientId: string) {
  return db
    .selectFrom('oauth_clients')
    .select(['id', 'name', 'secret_hash', 'redirect_uris', 'grants', 'scopes', 'owner_user_id'])
    .where('id', '=', clientId)
    .where('disabled_at', 'is', null)
    .executeTakeFirst();
}
export type ClientRow = NonNullable<Awaited<ReturnType<typeof findClient>>>;

/** A new client: its columns as the table declares them (`kind` defaults to 'app'; it cannot start disabled). */
export async function insertClient(db: Db, client: Omit<Insertable<OauthClientsTable>, 'created_at' | 'disabled_at'>) {
  await db.insertInto('oauth_clients').values(client).execute();
}

/**
 * The student's live grants to the client, newest first: what a token exchange may act on. `studentId` must be a
 * uuid (the column's type); the caller checks it.
 */
export async function findLiveGrants(db: Db, clientId: string, studentId: string) {
  return db
    .selectFrom('oauth_grants')
    .select(['id', 'scopes'])
    .where('client_id', '=', clientId)
    .where('user_id', '=', studentId)
    .where('revoked_at', 'is', null)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .execute();
}

/** Every institution, newest first, with how many students hold a live grant to it. */
export async function listInstitutions(db: Db) {
  return db
    .selectFrom('oauth_clients as c')
    .leftJoin('oauth_grants as g', (join) => join.onRef('g.client_id', '=', 'c.id').on('g.revoked_at', 'is', null))
    .select(['c.id', 'c.name', 'c.scopes', 'c.created_at', 'c.disabled_at'])
    .select((eb) => eb.fn.count<number | string>('g.user_id').distinct().as('students'))
    .where('c.kind', '=', 'institution')
    .groupBy(['c.id', 'c.name', 'c.scopes', 'c.created_at', 'c.disabled_at'])
    .orderBy('c.created_at', 'desc')
    .orderBy('c.id')
    .execute();
}

/**
 * Disables an institution for good and revokes every grant students gave it, in one transaction: its credential is
 * refused from then on and its exchanged tokens stop on their next request. False when no enabled institution has
 * this id.
 */
export async function disableInstitution(db: Db, clientId: string, now: Date): Promise<boolean> {
  return changingPrincipals(db, async (trx, changed) => {
    const disabled = await trx
      .updateTable('oauth_clients')
      .set({ disabled_at: now })
      .where('id', '=', clientId)
      .where('kind', '=', 'institution')
      .where('disabled_at', 'is', null)
      .executeTakeFirst();
    if (disabled.numUpdatedRows === 0n) return false;
    // Every consenting student's kept principals go, in every process, so the institution's tokens stop at once.
    await revokeLiveGrants(trx, { client_id: clientId }, 'client_disabled', now, changed);
    return true;
  });
}

export async function insertGrant(
  db: Db,
  grant: { client_id: string; user_id: string; scopes: string[]; authenticated_at?: Date | null },
): Promise<string> {
  return (await db.insertInto('oauth_grants').values(grant).returning('id').executeTakeFirstOrThrow()).id;
}

/** Revokes a grant, which ends every token descending from it; false when it was revoked already. */
export async function revokeGrant(db: Db, grantId: string, reason: string, now: Date): Promise<boolean> {
  return changingPrincipals(
    db,
    async (trx, changed) => (await revokeLiveGrants(trx, { id: grantId }, reason, now, changed)) > 0,
  );
}

/** Which live grants a revocation ends: one grant, a student's, a client's, or both; `except` keeps one of them. */
export interface GrantSelection {
  id?: string;
  user_id?: string;
  client_id?: string;
  except?: string | null;
}

/**
 * Revokes the live grants `which` selects, in `trx`, ends everything they own (GRANT_ARTIFACTS, in this same
 * transaction) and reports each account that lost one to `changed` (its kept principals go in every process);
 * returns how many were revoked. The one write of a grant's revocation.
 */
export async function revokeLiveGrants(
  trx: Db,
  which: GrantSelection,
  reason: string,
  now: Date,
  changed: (userId: string) => Promise<void>,
): Promise<number> {
  if (which.id === undefined && which.user_id === undefined && which.client_id === undefined)
    throw new Error('revokeLiveGrants: nothing selects the grants');
  let update = trx
    .updateTable('oauth_grants')
    .set({ revoked_at: now, revoked_reason: reason })
    .where('revoked_at', 'is', null);
  if (which.id !== undefined) update = update.where('id', '=', which.id);
  if (which.user_id !== undefined) update = update.where('user_id', '=', which.user_id);
  if (which.client_id !== undefined) update = update.where('client_id', '=', which.client_id);
  if (which.except) update = update.where('id', '!=', which.except);
  const revoked = await update.returning(['id', 'user_id']).execute();
  if (revoked.length === 0) return 0;
  const grantIds = revoked.map((grant) => grant.id);
  for (const artifact of GRANT_ARTIFACTS) await artifact.end?.(trx, grantIds, now);
  for (const userId of new Set(revoked.map((grant) => grant.user_id))) await changed(userId);
  return revoked.length;
}

/**
 * Holds the grant until the transaction ends, if it is live: what a credential of the grant creates in that
 * transaction (a webhook endpoint) is then either seen by a revocation that commits after it, or refused because
 * the revocation committed first. False when the grant is revoked.
 */
export async function lockLiveGrant(trx: Db, grantId: string): Promise<boolean> {
  const row = await trx
    .selectFrom('oauth_grants')
    .select('id')
    .where('id', '=', grantId)
    .where('revoked_at', 'is', null)
    .forShare()
    .executeTakeFirst();
  return row !== undefined;
}

export async function insertAuthorizationCode(
  db: Db,
  code: {
    code_hash: string;
    grant_id: string;
    redirect_uri: string;
    code_challenge: string;
    code_challenge_method: string;
    expires_at: Date;
  },
) {
  await db.insertInto('oauth_authorization_codes').values(code).execute();
}

/** A code with its grant, whether used or not (a second use is a replay the caller reacts to). */
export async function findAuthorizationCode(db: Db, codeHash: string) {
  return db
    .selectFrom('oauth_authorization_codes as c')
    .innerJoin('oauth_grants as g', 'g.id', 'c.grant_id')
    .select([
      'c.grant_id',
      'c.redirect_uri',
      'c.code_challenge',
      'c.code_challenge_method',
      'c.expires_at',
      'c.used_at',
    ])
    .select(['g.client_id', 'g.user_id', 'g.scopes', 'g.revoked_at'])
    .where('c.code_hash', '=', codeHash)
    .executeTakeFirst();
}

/** Marks a code used; false when it was used already (two exchanges raced). */
export async function useAuthorizationCode(db: Db, codeHash: string, now: Date): Promise<boolean> {
  const result = await db
    .updateTable('oauth_authorization_codes')
    .set({ used_at: now })
    .where('code_hash', '=', codeHash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function insertRefreshToken(db: Db, token: { token_hash: string; grant_id: string; expires_at: Date }) {
  await db.insertInto('oauth_refresh_tokens').values(token).execute();
}

/** A refresh token with its grant, rotated or not (using a rotated one is a replay the caller reacts to). */
export async function findRefreshToken(db: Db, tokenHash: string) {
  return (
    db
      .selectFrom('oauth_refresh_tokens as t')
      .innerJoin('oauth_grants as g', 'g.id', 't.grant_id')
      .select(['t.grant_id', 't.expires_at', 't.rotated_at'])
      .select(['g.client_id', 'g.user_id', 'g.scopes', 'g.revoked_at'])
      .where('t.token_hash', '=', tokenHash)
      // A token its grant's revocation ended is unknown from then on.
      .where('t.revoked_at', 'is', null)
      .executeTakeFirst()
  );
}

/** Marks a refresh token exchanged; false when it was exchanged already. */
export async function rotateRefreshToken(db: Db, tokenHash: string, now: Date): Promise<boolean> {
  const result = await db
    .updateTable('oauth_refresh_tokens')
    .set({ rotated_at: now })
    .where('token_hash', '=', tokenHash)
    .where('rotated_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * The apps a student has authorized: their live grants, one row per client. "Last used" is the newest token the
 * app obtained (a refresh token per sign-in and per refresh), which costs no write per request.
 */
export async function listAuthorizedApps(db: Db, userId: string) {
  return db
    .selectFrom('oauth_grants as g')
    .innerJoin('oauth_clients as c', 'c.id', 'g.client_id')
    .leftJoin('oauth_refresh_tokens as t', 't.grant_id', 'g.id')
    .select(['c.id as client_id', 'c.name as client_name'])
    .select((eb) => [
      eb.fn.min('g.created_at').as('granted_at'),
      eb.fn.coalesce(eb.fn.max('t.created_at'), eb.fn.max('g.created_at')).as('last_used_at'),
      // Scope lists of different lengths cannot be array_agg'ed into one array: unnest them first.
      sql<
        string[]
      >`array(select distinct scope from unnest(array_agg(array_to_string(g.scopes, ' '))) as lists(list), unnest(string_to_array(list, ' ')) as scope)`.as(
        'scopes',
      ),
    ])
    .where('g.user_id', '=', userId)
    .where('g.revoked_at', 'is', null)
    .groupBy(['c.id', 'c.name'])
    .orderBy('last_used_at', 'desc')
    .orderBy('c.id')
    .execute();
}

/** Revokes every live grant of the student to the client; the number revoked (0: the app holds none). */
export async function revokeClientGrants(
  db: Db,
  userId: string,
  clientId: string,
  reason: string,
  now: Date,
): Promise<number> {
  return changingPrincipals(db, (trx, changed) =>
    revokeLiveGrants(trx, { user_id: userId, client_id: clientId }, reason, now, changed),
  );
}

/**
 * Ends every sign-in of the student but `keptGrantId` (null: all of them), with everything each owns: what a password
 * change or reset does, so that a credential taken before it keeps nothing (an access token minting a key, say).
 * Runs in the caller's transaction, with the caller's `changed` (changingPrincipals).
 */
export async function revokeOtherSignIns(
  trx: Db,
  userId: string,
  keptGrantId: string | null,
  reason: string,
  now: Date,
  changed: (userId: string) => Promise<void>,
): Promise<number> {
  return revokeLiveGrants(trx, { user_id: userId, except: keptGrantId }, reason, now, changed);
}

/**
 * When the student last typed their password for this grant (the sign-in and consent page), or null: a grant no
 * password stands behind (client credentials), and any grant of an institution, whose tokens are exchanged ones
 * (RFC 8693): an institution acts for the student, it is never the student at the keyboard.
 */
export async function findSignInTime(db: Db, grantId: string): Promise<Date | null> {
  const row = await db
    .selectFrom('oauth_grants as g')
    .innerJoin('oauth_clients as c', 'c.id', 'g.client_id')
    .select('g.authenticated_at')
    .where('g.id', '=', grantId)
    .where('c.kind', '!=', 'institution')
    .executeTakeFirst();
  return row?.authenticated_at ?? null;
}
