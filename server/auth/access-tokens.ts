// OAuth 2.0 access tokens as JWTs per RFC 9068 (`typ: at+jwt`), signed with ES256 by jose. They live 15 minutes.
// Verification checks signature, type, issuer, audience and expiry; whether the grant behind the token was
// revoked is checked by the caller against the database (the `sid` claim names the grant).
import { randomUUID } from 'node:crypto';
import { jwtVerify, SignJWT, type JWK } from 'jose';
import { SIGNING_ALGORITHM, type SigningKeys } from './signing-keys.ts';

export const ACCESS_TOKEN_TTL_SECONDS = 15 * 60;

export interface AccessTokenClaims {
  /** The student the token acts for. */
  sub: string;
  client_id: string;
  /** Space-separated scopes (RFC 8693 `scope`). */
  scope: string;
  /** The grant the token descends from; revoking the grant invalidates the token. */
  sid: string;
  jti: string;
  exp: number;
}

export interface AccessTokenIssuer {
  issuer: string;
  audience: string;
  /** `lifetime_seconds`: shorter than the default for exchanged tokens (RFC 8693, server/oauth/token-exchange.ts). */
  issue(claims: {
    user_id: string;
    client_id: string;
    scopes: readonly string[];
    grant_id: string;
    lifetime_seconds?: number;
  }): Promise<{ token: string; expiresAt: Date }>;
  verify(token: string): Promise<AccessTokenClaims | undefined>;
  /** The public key set served at /oauth/jwks.json. */
  jwks(): { keys: JWK[] };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A valid signature vouches for who made a token, not for the shape of its claims (a key shared with another issuer, a
 * bug of ours): `sub` and `sid` go to uuid columns and `scope` is split, so anything else is an invalid token.
 */
function hasClaimShapes(payload: Record<string, unknown>): payload is Record<string, unknown> & AccessTokenClaims {
  const { sub, sid, scope, client_id, jti } = payload;
  return (
    typeof sub === 'string' &&
    UUID.test(sub) &&
    typeof sid === 'string' &&
    UUID.test(sid) &&
    typeof scope === 'string' &&
    typeof client_id === 'string' &&
    typeof jti === 'string'
  );
}

/**
 * Tokens whose signature and claims checked out, kept so that a client's next requests skip the ES256 verification
 * (~15% of a general-surface read's CPU). What is kept never changes: a token is valid from its signature until its
 * `exp` (a retired signing key still verifies until the last token it signed expires), so a kept token is only
 * checked against the clock again. Revocation is the grant's, read by the caller on every request.
 */
const KEPT_TOKENS = 10_000;

export function accessTokenIssuer(keys: SigningKeys, options: { issuer: string; now: () => Date }): AccessTokenIssuer {
  const audience = `${options.issuer}/api`;
  const seconds = () => Math.floor(options.now().getTime() / 1000);
  const verified = new Map<string, AccessTokenClaims>();
  const keep = (token: string, claims: AccessTokenClaims) => {
    // Oldest first out: a Map iterates in insertion order.
    if (verified.size >= KEPT_TOKENS) verified.delete(verified.keys().next().value!);
    verified.set(token, claims);
  };
  return {
    issuer: options.issuer,
    audience,
    async issue({ user_id, client_id, scopes, grant_id, lifetime_seconds = ACCESS_TOKEN_TTL_SECONDS }) {
      const issuedAt = seconds();
      const exp = issuedAt + lifetime_seconds;
      const signer = keys.signer();
      const token = await new SignJWT({ client_id, scope: scopes.join(' '), sid: grant_id })
        .setProtectedHeader({ alg: SIGNING_ALGORITHM, typ: 'at+jwt', kid: signer.kid })
        .setIssuer(options.issuer)
        .setAudience(audience)
        .setSubject(user_id)
        .setIssuedAt(issuedAt)
        .setExpirationTime(exp)
        .setJti(randomUUID())
        .sign(signer.privateKey);
      return { token, expiresAt: new Date(exp * 1000) };
    },
    async verify(token) {
      const kept = verified.get(token);
      if (kept) {
        // jose's rule: a token is expired from its `exp` second on.
        if (seconds() < kept.exp) return kept;
        verified.delete(token);
        return undefined;
      }
      try {
        const key = async ({ kid }: { kid?: string }) => {
          const found = await keys.verifier(kid);
          if (!found) throw new Error('no key of the set has this kid');
          return found;
        };
        const { payload } = await jwtVerify(token, key, {
          issuer: options.issuer,
          audience,
          typ: 'at+jwt',
          algorithms: [SIGNING_ALGORITHM],
          currentDate: options.now(),
          requiredClaims: ['sub', 'exp', 'jti', 'client_id', 'scope', 'sid'],
        });
        if (!hasClaimShapes(payload)) return undefined;
        keep(token, payload);
        return payload;
      } catch {
        return undefined;
      }
    },
    jwks: () => ({ keys: keys.jwks() }),
  };
}
