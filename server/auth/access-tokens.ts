// OAuth 2.0 access tokens as JWTs per RFC 9068 (`typ: at+jwt`), signed with ES256 by jose. They live 15 minutes.
// Verification checks signature, type, issuer, audience and expiry; whether the grant behind the token was
// revoked is checked by the caller against the database (the `sid` claim names the grant).
import { randomUUID } from 'node:crypto';
import {
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  importJWK,
  importPKCS8,
  jwtVerify,
  SignJWT,
  type CryptoKey,
  type JWK,
  type KeyObject,
} from 'jose';

export const ACCESS_TOKEN_TTL_SECONDS = 15 * 60;
const ALGORITHM = 'ES256';

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
  issue(claims: { user_id: string; client_id: string; scopes: readonly string[]; grant_id: string }): Promise<{ token: string; expiresAt: Date }>;
  verify(token: string): Promise<AccessTokenClaims | undefined>;
  /** The public key set served at /oauth/jwks.json. */
  jwks(): { keys: JWK[] };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A valid signature vouches for who made a token, not for the shape of its claims (a key shared with another
 * issuer, a bug of ours): `sub` and `sid` go to uuid columns and `scope` is split, so anything else is an invalid token.
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

type SigningKey = { privateKey: CryptoKey | KeyObject; publicKey: CryptoKey | KeyObject | Uint8Array; publicJwk: JWK };

/**
 * The signing key: `JWT_PRIVATE_KEY` (an ES256 PKCS#8 PEM) when set, which every process of a deployment must share;
 * otherwise a key made at start-up, so tokens issued before a restart stop verifying (refresh tokens still work).
 */
export async function loadSigningKey(pem: string | undefined): Promise<SigningKey & { generated: boolean }> {
  if (pem) {
    const privateKey = await importPKCS8(pem, ALGORITHM, { extractable: true });
    const { d: _private, ...publicJwk } = await exportJWK(privateKey);
    return { privateKey, publicKey: await importJWK(publicJwk, ALGORITHM), publicJwk: await withKid(publicJwk), generated: false };
  }
  const pair = await generateKeyPair(ALGORITHM, { extractable: true });
  return { ...pair, publicJwk: await withKid(await exportJWK(pair.publicKey)), generated: true };
}

async function withKid(jwk: JWK): Promise<JWK> {
  return { ...jwk, kid: await calculateJwkThumbprint(jwk), alg: ALGORITHM, use: 'sig' };
}

export function accessTokenIssuer(key: SigningKey, options: { issuer: string; now: () => Date }): AccessTokenIssuer {
  const audience = `${options.issuer}/api`;
  const seconds = () => Math.floor(options.now().getTime() / 1000);
  return {
    issuer: options.issuer,
    audience,
    async issue({ user_id, client_id, scopes, grant_id }) {
      const issuedAt = seconds();
      const exp = issuedAt + ACCESS_TOKEN_TTL_SECONDS;
      const token = await new SignJWT({ client_id, scope: scopes.join(' '), sid: grant_id })
        .setProtectedHeader({ alg: ALGORITHM, typ: 'at+jwt', kid: key.publicJwk.kid! })
        .setIssuer(options.issuer)
        .setAudience(audience)
        .setSubject(user_id)
        .setIssuedAt(issuedAt)
        .setExpirationTime(exp)
        .setJti(randomUUID())
        .sign(key.privateKey);
      return { token, expiresAt: new Date(exp * 1000) };
    },
    async verify(token) {
      try {
        const { payload } = await jwtVerify(token, key.publicKey, {
          issuer: options.issuer,
          audience,
          typ: 'at+jwt',
          algorithms: [ALGORITHM],
          currentDate: options.now(),
          requiredClaims: ['sub', 'exp', 'jti', 'client_id', 'scope', 'sid'],
        });
        return hasClaimShapes(payload) ? payload : undefined;
      } catch {
        return undefined;
      }
    },
    jwks: () => ({ keys: [key.publicJwk] }),
  };
}
