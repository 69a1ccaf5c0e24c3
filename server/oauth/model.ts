// The storage model @node-oauth/oauth2-server calls while it runs the grants (authorization code + PKCE, refresh
// token, client credentials). The library does the protocol (parameter checks, PKCE verification, RFC 6749 error
// bodies); this file decides what is stored and adds what the library lacks: every token descends from a grant,
// PKCE S256 is required, and a replayed refresh token or authorization code revokes its whole grant.
import { timingSafeEqual } from 'node:crypto';
import type OAuth2Server from '@node-oauth/oauth2-server';
import type { Db } from '../../db/connect.ts';
import {
  findAuthorizationCode,
  findClient,
  findRefreshToken,
  insertAuthorizationCode,
  insertGrant,
  insertRefreshToken,
  revokeGrant,
  rotateRefreshToken,
  useAuthorizationCode,
  type ClientRow,
} from '../../db/queries/oauth.ts';
import type { AccessTokenIssuer } from '../auth/access-tokens.ts';
import { hashSecret } from '../auth/secret-hash.ts';
import { defaultScopes } from './default-scopes.ts';

export const REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 60 * 60;
export const AUTHORIZATION_CODE_TTL_SECONDS = 60;

/** What the library carries around as its `user`: the student, and the grant once there is one. */
export interface GrantUser {
  id: string;
  grant_id?: string;
  /** When the student typed the password on the sign-in page: the grant's re-authentication time (reauthentication.ts). */
  authenticated_at?: Date;
}

/** Compares a presented client secret with the stored hash without leaking timing. */
export function secretMatches(secret: string, secretHash: string): boolean {
  const presented = Buffer.from(hashSecret(secret), 'hex');
  const stored = Buffer.from(secretHash, 'hex');
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}

/** The client as the library wants it, plus its name for the sign-in page and its owner for client credentials. */
function toLibraryClient(row: ClientRow): OAuth2Server.Client {
  return {
    id: row.id,
    name: row.name,
    grants: row.grants,
    redirectUris: row.redirect_uris,
    scopes: row.scopes,
    owner_user_id: row.owner_user_id,
  };
}

export function oauthModel(db: Db, tokens: AccessTokenIssuer, now: () => Date) {
  return {
    /**
     * `secret` is null when the authorize endpoint looks a client up (no authentication there), undefined when
     * the token endpoint got none (allowed for public clients only), else what the client presented.
     */
    async getClient(clientId: string, secret: string | null | undefined) {
      const row = await findClient(db, clientId);
      if (!row) return false;
      if (secret === null) return toLibraryClient(row);
      const authenticated = row.secret_hash
        ? secret !== undefined && secretMatches(secret, row.secret_hash)
        : secret === undefined;
      return authenticated ? toLibraryClient(row) : false;
    },

    async validateRedirectUri(redirectUri: string, client: OAuth2Server.Client) {
      return (client.redirectUris as string[]).includes(redirectUri); // exact match, as OAuth 2.1 requires
    },

    /**
     * The scopes asked for, all of which the client must be allowed; none asked for means all the client has but those
     * an app must ask for by name (default-scopes.ts).
     */
    async validateScope(_user: GrantUser, client: OAuth2Server.Client, scope?: string[]) {
      const allowed = client.scopes as string[];
      if (!scope || scope.length === 0) return defaultScopes(allowed);
      return scope.every((s) => allowed.includes(s)) ? scope : false;
    },

    async saveAuthorizationCode(
      code: Pick<
        OAuth2Server.AuthorizationCode,
        'authorizationCode' | 'expiresAt' | 'redirectUri' | 'scope' | 'codeChallenge' | 'codeChallengeMethod'
      >,
      client: OAuth2Server.Client,
      user: GrantUser,
    ) {
      if (!code.codeChallenge || code.codeChallengeMethod !== 'S256')
        throw new Error('PKCE S256 is checked before authorize() runs');
      const grant_id = await insertGrant(db, {
        client_id: client.id,
        user_id: user.id,
        scopes: code.scope ?? [],
        authenticated_at: user.authenticated_at ?? null,
      });
      await insertAuthorizationCode(db, {
        code_hash: hashSecret(code.authorizationCode),
        grant_id,
        redirect_uri: code.redirectUri,
        code_challenge: code.codeChallenge,
        code_challenge_method: code.codeChallengeMethod,
        expires_at: code.expiresAt,
      });
      return { ...code, client, user: { id: user.id, grant_id } };
    },

    async getAuthorizationCode(authorizationCode: string) {
      const row = await findAuthorizationCode(db, hashSecret(authorizationCode));
      if (!row || row.revoked_at) return false;
      if (row.used_at) {
        // RFC 6749 §4.1.2: a code used twice revokes the tokens issued with it.
        await revokeGrant(db, row.grant_id, 'authorization_code_reuse', now());
        return false;
      }
      return {
        authorizationCode,
        expiresAt: row.expires_at,
        redirectUri: row.redirect_uri,
        scope: row.scopes,
        codeChallenge: row.code_challenge,
        codeChallengeMethod: row.code_challenge_method,
        client: { id: row.client_id, grants: [] },
        user: { id: row.user_id, grant_id: row.grant_id },
      };
    },

    async revokeAuthorizationCode(code: OAuth2Server.AuthorizationCode) {
      return useAuthorizationCode(db, hashSecret(code.authorizationCode), now());
    },

    /** Client credentials act for the account the client is bound to (`clients create --owner`). */
    async getUserFromClient(client: OAuth2Server.Client) {
      const owner = client.owner_user_id as string | null;
      return owner ? { id: owner } : false;
    },

    async generateAccessToken(client: OAuth2Server.Client, user: GrantUser, scope: string[]) {
      // Client credentials have no grant yet at this point; each issue is a grant of its own.
      user.grant_id ??= await insertGrant(db, { client_id: client.id, user_id: user.id, scopes: scope });
      const { token } = await tokens.issue({
        user_id: user.id,
        client_id: client.id,
        scopes: scope,
        grant_id: user.grant_id,
      });
      return token;
    },

    async saveToken(token: OAuth2Server.Token, client: OAuth2Server.Client, user: GrantUser) {
      if (token.refreshToken) {
        await insertRefreshToken(db, {
          token_hash: hashSecret(token.refreshToken),
          grant_id: user.grant_id!,
          expires_at: token.refreshTokenExpiresAt ?? new Date(now().getTime() + REFRESH_TOKEN_TTL_SECONDS * 1000),
        });
      }
      return { ...token, client, user };
    },

    async getRefreshToken(refreshToken: string) {
      const row = await findRefreshToken(db, hashSecret(refreshToken));
      if (!row || row.revoked_at) return false;
      if (row.rotated_at) {
        // A rotated token came back: either the client or a thief has a copy. Revoke the whole grant, so both
        // lose access and the student signs in again (OAuth 2.0 Security BCP, refresh token rotation).
        await revokeGrant(db, row.grant_id, 'refresh_token_reuse', now());
        return false;
      }
      return {
        refreshToken,
        refreshTokenExpiresAt: row.expires_at,
        scope: row.scopes,
        client: { id: row.client_id, grants: [] },
        user: { id: row.user_id, grant_id: row.grant_id },
      };
    },

    /** Rotation: the library revokes the presented refresh token before it issues the next one. */
    async revokeToken(token: OAuth2Server.RefreshToken) {
      return rotateRefreshToken(db, hashSecret(token.refreshToken), now());
    },
  };
}
