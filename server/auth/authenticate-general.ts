// Authentication of the general surface, one function per security scheme of spec/general: OAuth access tokens (JWT)
// and personal API keys, both read by passport-http-bearer when they come as `Authorization: Bearer`
// (server/auth/bearer-authenticator.ts), and the key also from `X-Service-API-Key`. Each yields a typed
// GeneralPrincipal.
//
// What a credential stands for (its grant or key still active, the account's plan, zone and country) is kept per
// process, by grant or by key hash, and dropped in every process when a change to any of it commits
// (db/queries/principal-changes.ts): the hot path costs no database round trip, and a revocation or a new plan
// still holds from the next request on. While the process cannot hear notifications every request reads the database.
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import type { Db } from '../../db/connect.ts';
import { findActiveKeyKind } from '../../db/queries/api-keys.ts';
import { onPrincipalsCommitted, PRINCIPALS_CHANNEL } from '../../db/queries/principal-changes.ts';
import { findGrantAccount, findPersonalKeyAccount } from '../../db/queries/principals.ts';
import type { AccessTokenIssuer } from './access-tokens.ts';
import { looksLikeApiKey } from './api-keys.ts';
import { bearerAuthenticator } from './bearer-authenticator.ts';
import { headerValue } from '../http/request-target.ts';
import { invalidatedCache } from '../../db/invalidated-cache.ts';
import type { Notifications } from '../../db/notifications.ts';
import { keyUseRecorder } from './key-use.ts';
import { hashSecret } from './secret-hash.ts';
import type { AuthOutcome } from '../contract/surface.ts';
import { limitsOf } from '../../domain/plans.ts';
import type { Credential, GeneralPrincipal, Scope } from './principal.ts';

type Verify = (token: string) => Promise<GeneralPrincipal | undefined>;

/** The account part of a principal, as kept per grant. */
type Account = Omit<GeneralPrincipal, 'scopes' | 'credential'>;
/** A personal key's principal, as kept per key hash. */
type KeyPrincipal = GeneralPrincipal & { credential: Extract<Credential, { kind: 'api_key' }> };

/** Principals kept per process (by grant, by key): ~400 bytes each, so at most ~20 MB. */
const KEPT_PRINCIPALS = 50_000;

const MISSING = { error: 'missing' } as const;

const PARTNER_KEY_ON_GENERAL_SURFACE =
  "This is a partner API key: it works on the partner API (/api/v1/...) only. The general surface takes a student's OAuth access token or personal API key.";

export function generalAuthenticators(
  db: Db,
  tokens: AccessTokenIssuer,
  logger: Logger,
  now: () => Date,
  notifications: Notifications,
) {
  const recordKeyUse = keyUseRecorder(db, logger, now);
  // Dropped per account: every writer names the account whose grant, key, plan, zone or country it changed.
  const ownerOf = (value: { user_id: string }) => value.user_id;
  const grantAccounts = invalidatedCache<Account>(notifications, PRINCIPALS_CHANNEL, {
    maxEntries: KEPT_PRINCIPALS,
    ownerOf,
  });
  const keyPrincipals = invalidatedCache<KeyPrincipal>(notifications, PRINCIPALS_CHANNEL, {
    maxEntries: KEPT_PRINCIPALS,
    ownerOf,
  });
  onPrincipalsCommitted(db, (userId) => {
    grantAccounts.dropOwner(userId);
    keyPrincipals.dropOwner(userId);
  });

  const verifyAccessToken: Verify = async (token) => {
    const claims = await tokens.verify(token);
    if (!claims) return undefined;
    // A revoked grant (logout, refresh-token replay) stops its tokens from the next request on.
    const account = await grantAccounts.get(`${claims.sid}:${claims.sub}`, async () => {
      const row = await findGrantAccount(db, claims.sid, claims.sub);
      return (
        row && {
          user_id: row.user_id,
          plan: row.plan,
          limits: limitsOf(row),
          time_zone: row.time_zone,
          country_code: row.country_code,
        }
      );
    });
    if (!account) return undefined;
    return {
      ...account,
      scopes: claims.scope.split(' ').filter(Boolean) as Scope[],
      credential: { kind: 'access_token', client_id: claims.client_id, grant_id: claims.sid },
    };
  };
  const verifyPersonalKey: Verify = async (key) => {
    if (!looksLikeApiKey(key)) return undefined;
    const hash = hashSecret(key);
    const principal = await keyPrincipals.get(hash, async () => {
      const row = await findPersonalKeyAccount(db, hash);
      if (!row) return undefined;
      const { user_id, plan, time_zone, country_code, key_id, prefix, scopes, grant_id } = row;
      const credential = { kind: 'api_key', key_id, prefix, grant_id } as const;
      return { user_id, plan, limits: limitsOf(row), time_zone, country_code, scopes: scopes as Scope[], credential };
    });
    if (principal) recordKeyUse({ id: principal.credential.key_id, prefix: principal.credential.prefix });
    return principal;
  };

  const outcome = (principal: GeneralPrincipal | undefined): AuthOutcome<GeneralPrincipal> =>
    principal ? { principal } : { error: 'invalid' };
  // Both kinds of key look alike (svc_live_…); a partner key sent here is told where it belongs.
  const keyOutcome = async (
    key: string,
    principal: GeneralPrincipal | undefined,
  ): Promise<AuthOutcome<GeneralPrincipal>> => {
    if (principal || !looksLikeApiKey(key) || (await findActiveKeyKind(db, hashSecret(key))) !== 'partner')
      return outcome(principal);
    return { error: 'invalid', detail: PARTNER_KEY_ON_GENERAL_SURFACE };
  };

  // The two bearer schemes share the Authorization header; the token's shape says which one it is meant for.
  return {
    OAuth2: bearerAuthenticator(async (token) =>
      looksLikeApiKey(token) ? MISSING : outcome(await verifyAccessToken(token)),
    ),
    PersonalKeyBearer: bearerAuthenticator(async (token) =>
      looksLikeApiKey(token) ? keyOutcome(token, await verifyPersonalKey(token)) : MISSING,
    ),
    PersonalKeyHeader: async (req: IncomingMessage): Promise<AuthOutcome<GeneralPrincipal>> => {
      const key = headerValue(req, 'x-service-api-key');
      return key ? keyOutcome(key, await verifyPersonalKey(key)) : MISSING;
    },
  };
}
