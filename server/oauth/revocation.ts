// Token revocation (RFC 7009). Revoking either kind of token revokes its grant, so the access token and every
// refresh token of that sign-in stop at once. Unknown tokens and tokens of other clients answer 200 without
// effect: the response never tells a client whether a token exists.
import type { Request } from 'express';
import type { Db } from '../../db/connect.ts';
import { findRefreshToken, revokeGrant } from '../../db/queries/oauth.ts';
import type { AccessTokenIssuer } from '../auth/access-tokens.ts';
import { hashSecret } from '../auth/secret-hash.ts';
import type { oauthModel } from './model.ts';

export async function revokeToken(
  db: Db,
  tokens: AccessTokenIssuer,
  model: ReturnType<typeof oauthModel>,
  req: Request,
  now: Date,
): Promise<'revoked' | 'invalid_client' | 'invalid_request'> {
  const credentials = clientCredentials(req);
  const client = credentials ? await model.getClient(credentials.id, credentials.secret) : false;
  if (!client) return 'invalid_client';
  const token = typeof req.body?.token === 'string' ? req.body.token : '';
  if (!token) return 'invalid_request';

  const grant = await grantOf(token);
  if (grant && grant.client_id === client.id) await revokeGrant(db, grant.grant_id, 'revoked_by_client', now);
  return 'revoked';

  async function grantOf(value: string) {
    const claims = value.split('.').length === 3 ? await tokens.verify(value) : undefined;
    if (claims) return { grant_id: claims.sid, client_id: claims.client_id };
    return findRefreshToken(db, hashSecret(value));
  }
}

/** HTTP Basic (client_secret_basic), else body fields (client_secret_post, or client_id alone for public clients). */
function clientCredentials(req: Request): { id: string; secret: string | undefined } | undefined {
  const basic = /^Basic +(\S+)$/i.exec(req.get('authorization') ?? '')?.[1];
  if (basic) {
    // RFC 6749 §2.3.1: both parts are form-urlencoded before they are joined.
    const decoded = Buffer.from(basic, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    try {
      return colon < 0
        ? undefined
        : { id: decodeURIComponent(decoded.slice(0, colon)), secret: decodeURIComponent(decoded.slice(colon + 1)) };
    } catch {
      return undefined; // malformed percent-encoding
    }
  }
  const id = req.body?.client_id;
  const secret = req.body?.client_secret;
  if (typeof id !== 'string' || !id) return undefined;
  return { id, secret: typeof secret === 'string' && secret ? secret : undefined };
}
