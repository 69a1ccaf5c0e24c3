// The real OAuth flow over HTTP, as an app runs it: the sign-in form of /oauth/authorize with PKCE S256, then
// the code exchange at /oauth/token. Tests whose subject is signing in, or what ends a sign-in, get their tokens this
// way; the other tests' students have theirs minted to the same rows and claims (minted-sign-in.ts).
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import supertest from 'supertest';
import { registerClient } from '../../server/oauth/clients.ts';
import { testDatabase } from './shared-database.ts';

type App = Parameters<typeof supertest>[0];

export const TEST_REDIRECT_URI = 'http://127.0.0.1:8765/callback';

export interface TokenSet {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  scope: string;
  token_type: string;
}

export function pkcePair() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export function registerTestClient(scopes: string[], options: { confidential?: boolean; owner_user_id?: string } = {}) {
  return registerClient(testDatabase().db, {
    name: 'Test app',
    redirect_uris: [TEST_REDIRECT_URI],
    scopes,
    confidential: options.confidential ?? false,
    ...options,
  });
}

/** Signs in on the authorize form and returns the redirect's code (and the verifier that goes with it). */
export async function authorize(
  app: App,
  input: { client_id: string; email: string; password: string; scope: string; state?: string },
) {
  const { verifier, challenge } = pkcePair();
  const res = await supertest(app)
    .post('/oauth/authorize')
    .type('form')
    .send({
      response_type: 'code',
      client_id: input.client_id,
      redirect_uri: TEST_REDIRECT_URI,
      scope: input.scope,
      state: input.state ?? 'state-123',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      email: input.email,
      password: input.password,
      decision: 'allow',
    })
    .expect(303);
  assert.equal(res.headers['cache-control'], 'no-store', 'no cache keeps the redirect that carries the code');
  const location = new URL(res.headers.location!);
  const code = location.searchParams.get('code');
  assert.ok(code, `authorize redirected without a code: ${location}`);
  assert.equal(location.searchParams.get('state'), input.state ?? 'state-123');
  return { code, verifier };
}

export async function exchangeCode(
  app: App,
  input: { client_id: string; code: string; verifier: string },
): Promise<TokenSet> {
  const res = await supertest(app)
    .post('/oauth/token')
    .type('form')
    .send({
      grant_type: 'authorization_code',
      client_id: input.client_id,
      code: input.code,
      redirect_uri: TEST_REDIRECT_URI,
      code_verifier: input.verifier,
    })
    .expect(200);
  return res.body as TokenSet;
}

export function refresh(app: App, input: { client_id: string; refresh_token: string }) {
  return supertest(app)
    .post('/oauth/token')
    .type('form')
    .send({ grant_type: 'refresh_token', client_id: input.client_id, refresh_token: input.refresh_token });
}

/** Authorization code + PKCE, start to finish. */
export async function signIn(
  app: App,
  input: { client_id: string; email: string; password: string; scope: string },
): Promise<TokenSet> {
  const { code, verifier } = await authorize(app, input);
  return exchangeCode(app, { client_id: input.client_id, code, verifier });
}
