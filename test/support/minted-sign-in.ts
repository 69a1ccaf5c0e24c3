// A sign-in made without HTTP, for tests whose subject is not signing in. The OAuth server's own storage model
// (server/oauth/model.ts) is called in the order its library calls it on /oauth/authorize and /oauth/token, with the
// library's own token generator, so the grant, its used authorization code, the access token and the refresh token
// are the ones a real sign-in leaves. What is skipped: the password check (an Argon2 verification) and six HTTP
// round trips. Tests of the sign-in itself use the real flow (oauth-flow.ts).
import { createRequire } from 'node:module';
import type OAuth2Server from '@node-oauth/oauth2-server';
import type { Db } from '../../db/connect.ts';
import type { AccessTokenIssuer } from '../../server/auth/access-tokens.ts';
import { AUTHORIZATION_CODE_TTL_SECONDS, oauthModel, REFRESH_TOKEN_TTL_SECONDS } from '../../server/oauth/model.ts';
import { pkcePair, TEST_REDIRECT_URI } from './oauth-flow.ts';

/** What the library makes authorization codes and refresh tokens with (it exports no types for its utilities). */
const { generateRandomToken } = createRequire(import.meta.url)('@node-oauth/oauth2-server/lib/utils/token-util.js') as {
  generateRandomToken(): Promise<string>;
};

/** The student `user_id` signs in to the public client `client_id`, consenting to `scopes`, now. */
export async function mintSignIn(
  deps: { db: Db; tokens: AccessTokenIssuer },
  input: { client_id: string; user_id: string; scopes: readonly string[] },
): Promise<{ access_token: string; refresh_token: string }> {
  const model = oauthModel(deps.db, deps.tokens, () => new Date());
  const at = Date.now();

  // POST /oauth/authorize, once the password checked out.
  const client = await model.getClient(input.client_id, null);
  if (!client) throw new Error(`no client ${input.client_id} to sign in to`);
  const scope = await model.validateScope({ id: input.user_id }, client, [...input.scopes]);
  if (!scope) throw new Error(`the client may not have ${input.scopes.join(' ')}`);
  const code = await model.saveAuthorizationCode(
    {
      authorizationCode: await generateRandomToken(),
      expiresAt: new Date(at + AUTHORIZATION_CODE_TTL_SECONDS * 1000),
      redirectUri: TEST_REDIRECT_URI,
      scope,
      codeChallenge: pkcePair().challenge,
      codeChallengeMethod: 'S256',
    },
    client,
    { id: input.user_id, authenticated_at: new Date(at) },
  );

  // POST /oauth/token with the code: it is used up, then the tokens are issued and the refresh token stored.
  if (!(await model.revokeAuthorizationCode(code as OAuth2Server.AuthorizationCode)))
    throw new Error('the fresh authorization code was used already');
  const accessToken = await model.generateAccessToken(client, code.user, scope);
  const refreshToken = await generateRandomToken();
  const refreshTokenExpiresAt = new Date(Date.now() + REFRESH_TOKEN_TTL_SECONDS * 1000);
  await model.saveToken(
    { accessToken, refreshToken, refreshTokenExpiresAt, scope, client, user: code.user },
    client,
    code.user,
  );
  return { access_token: accessToken, refresh_token: refreshToken };
}
