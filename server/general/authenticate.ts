// Authentication of the general surface, one function per security scheme of spec/general: OAuth access tokens
// (JWT) and personal API keys, both verified through passport + passport-http-bearer when they come as
// `Authorization: Bearer`, and the key also from `X-Service-API-Key`. Each yields a typed GeneralPrincipal.
import type { Request } from 'express';
import { Passport } from 'passport';
import type { Logger } from 'pino';
import { Strategy as BearerStrategy } from 'passport-http-bearer';
import type { Db } from '../../db/connect.ts';
import { findActiveKeyKind } from '../../db/queries/api-keys.ts';
import { findGrantAccount, findPersonalKeyAccount } from '../../db/queries/principals.ts';
import type { AccessTokenIssuer } from '../auth/access-tokens.ts';
import { looksLikeApiKey } from '../auth/api-keys.ts';
import { bearerToken } from '../auth/bearer-token.ts';
import { keyUseRecorder } from '../auth/key-use.ts';
import { hashSecret } from '../auth/secret-hash.ts';
import type { AuthOutcome } from '../surface.ts';
import { limitsOf } from './plans.ts';
import type { GeneralPrincipal, Scope } from './principal.ts';

type Verify = (token: string) => Promise<GeneralPrincipal | undefined>;

const PARTNER_KEY_ON_GENERAL_SURFACE =
  "This is a partner API key: it works on the partner API (/api/v1/...) only. The general surface takes a student's OAuth access token or personal API key.";

export function generalAuthenticators(db: Db, tokens: AccessTokenIssuer, logger: Logger, now: () => Date) {
  const recordKeyUse = keyUseRecorder(db, logger, now);
  const verifyAccessToken: Verify = async (token) => {
    const claims = await tokens.verify(token);
    if (!claims) return undefined;
    // One indexed read per request: a revoked grant (logout, refresh-token replay) stops its tokens at once.
    const account = await findGrantAccount(db, claims.sid, claims.sub);
    if (!account) return undefined;
    const { user_id, plan, time_zone, country_code } = account;
    return {
      user_id,
      plan,
      limits: limitsOf(account),
      time_zone,
      country_code,
      scopes: claims.scope.split(' ').filter(Boolean) as Scope[],
      credential: { kind: 'access_token', client_id: claims.client_id, grant_id: claims.sid },
    };
  };
  const verifyPersonalKey: Verify = async (key) => {
    const account = looksLikeApiKey(key) ? await findPersonalKeyAccount(db, hashSecret(key)) : undefined;
    if (!account) return undefined;
    const { user_id, plan, time_zone, country_code, key_id, prefix, scopes, grant_id } = account;
    recordKeyUse({ id: key_id, prefix });
    const credential = { kind: 'api_key', key_id, prefix, grant_id } as const;
    return { user_id, plan, limits: limitsOf(account), time_zone, country_code, scopes: scopes as Scope[], credential };
  };

  // A private passport instance: each app (and each test's app) has its own strategies.
  const passport = new Passport();
  passport.use('access-token', bearerStrategy(verifyAccessToken));
  passport.use('personal-key', bearerStrategy(verifyPersonalKey));
  const viaPassport = (strategy: string, req: Request) =>
    new Promise<GeneralPrincipal | undefined>((resolve, reject) => {
      passport.authenticate(strategy, { session: false }, (error: unknown, principal: GeneralPrincipal | false) =>
        error ? reject(error) : resolve(principal || undefined),
      )(req, undefined as never, reject);
    });

  const outcome = (principal: GeneralPrincipal | undefined): AuthOutcome<GeneralPrincipal> => (principal ? { principal } : { error: 'invalid' });
  // Both kinds of key look alike (svc_live_…); a partner key sent here is told where it belongs.
  const keyOutcome = async (key: string, principal: GeneralPrincipal | undefined): Promise<AuthOutcome<GeneralPrincipal>> => {
    if (principal || !looksLikeApiKey(key) || (await findActiveKeyKind(db, hashSecret(key))) !== 'partner') return outcome(principal);
    return { error: 'invalid', detail: PARTNER_KEY_ON_GENERAL_SURFACE };
  };

  // The two bearer schemes share the Authorization header; the token's shape says which one it is meant for.
  return {
    OAuth2: async (req: Request): Promise<AuthOutcome<GeneralPrincipal>> => {
      const token = bearerToken(req);
      if (!token || looksLikeApiKey(token)) return { error: 'missing' };
      return outcome(await viaPassport('access-token', req));
    },
    PersonalKeyBearer: async (req: Request): Promise<AuthOutcome<GeneralPrincipal>> => {
      const token = bearerToken(req);
      if (!token || !looksLikeApiKey(token)) return { error: 'missing' };
      return keyOutcome(token, await viaPassport('personal-key', req));
    },
    PersonalKeyHeader: async (req: Request): Promise<AuthOutcome<GeneralPrincipal>> => {
      const key = req.get('x-service-api-key');
      return key ? keyOutcome(key, await verifyPersonalKey(key)) : { error: 'missing' };
    },
  };
}

function bearerStrategy(verify: Verify) {
  return new BearerStrategy((token, done) => {
    verify(token).then(
      (principal) => done(null, principal ?? false),
      (error: unknown) => done(error),
    );
  });
}
