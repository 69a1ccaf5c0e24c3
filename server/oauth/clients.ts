// Registering OAuth clients (operators, through `npm run cli -- clients create`). A confidential client's secret
// is returned once and stored as a SHA-256 hash; public clients (browser and mobile apps) have none and must use PKCE.
import { randomBytes } from 'node:crypto';
import type { Db } from '../../db/connect.ts';
import { insertClient } from '../../db/queries/oauth.ts';
import { hashSecret } from '../auth/secret-hash.ts';
import { TOKEN_EXCHANGE_GRANT } from './token-exchange.ts';

export interface NewClient {
  name: string;
  redirect_uris: string[];
  scopes: string[];
  /** Confidential clients get a secret; with an owner they may also use client credentials, acting for the owner. */
  confidential: boolean;
  owner_user_id?: string;
  /**
   * An institution: a confidential client that may also exchange its credential for a token of one student who
   * consented to it (RFC 8693, server/oauth/token-exchange.ts). It has no owner: it acts for nobody by itself.
   */
  institution?: boolean;
}

const LOOPBACK_HOSTS = new Set(['localhost', '[::1]']);

/**
 * Why `uri` cannot be a redirect URI, or undefined when it can: absolute http(s), no fragment (RFC 6749 §3.1.2),
 * and plain http only for a loopback host (OAuth 2.1 §2.3.1; a native app's local listener), never across a network
 * where the authorization code could be read on the way.
 */
export function redirectUriProblem(uri: string): string | undefined {
  const url = URL.canParse(uri) ? new URL(uri) : undefined;
  if (!url || !/^https?:$/.test(url.protocol)) return 'must be an absolute http(s) URL';
  if (uri.includes('#')) return 'must not contain a fragment (#…): RFC 6749 §3.1.2';
  const loopback = LOOPBACK_HOSTS.has(url.hostname) || /^127(\.\d{1,3}){3}$/.test(url.hostname);
  if (url.protocol === 'http:' && !loopback)
    return 'must use https unless its host is loopback (localhost, 127.0.0.1, [::1])';
  return undefined;
}

export async function registerClient(
  db: Db,
  client: NewClient,
): Promise<{ client_id: string; client_secret?: string }> {
  if (client.institution && (!client.confidential || client.owner_user_id))
    throw new Error('an institution is a confidential client without an owner');
  const client_id = `client_${randomBytes(12).toString('base64url')}`;
  const client_secret = client.confidential ? `secret_${randomBytes(32).toString('base64url')}` : undefined;
  const grants = ['authorization_code', 'refresh_token'];
  if (client.confidential && client.owner_user_id) grants.push('client_credentials');
  if (client.institution) grants.push(TOKEN_EXCHANGE_GRANT);
  await insertClient(db, {
    kind: client.institution ? 'institution' : 'app',
    id: client_id,
    name: client.name,
    secret_hash: client_secret ? hashSecret(client_secret) : null,
    redirect_uris: client.redirect_uris,
    grants,
    scopes: client.scopes,
    owner_user_id: client.owner_user_id ?? null,
  });
  return client_secret ? { client_id, client_secret } : { client_id };
}
