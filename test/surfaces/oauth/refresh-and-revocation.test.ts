// Refresh-token rotation with replay detection, revocation (RFC 7009), expiry, and client credentials.
import assert from 'node:assert/strict';
import supertest from 'supertest';
import { accessTokenIssuer } from '../../../server/auth/access-tokens.ts';
import { loadSigningKey } from '../../../server/auth/signing-keys.ts';
import { pino } from 'pino';
import { createApp } from '../../../app/app.ts';
import { memoryLimitStores } from '../../../server/limits/rate-limits.ts';
import { contractClient } from '../../support/contract.ts';
import { generalApp } from '../../support/general-app.ts';
import { refresh, registerTestClient, signIn } from '../../support/oauth-flow.ts';
import { TEST_ISSUER, testNotifications, testWebhookSettings } from '../../support/partner-app.ts';
import { testDatabase } from '../../support/shared-database.ts';

describe('OAuth refresh tokens, revocation and client credentials', () => {
  let context: Awaited<ReturnType<typeof generalApp>>;
  let clientId: string;
  before(async () => {
    context = await generalApp();
    clientId = (await registerTestClient(['profile:read'])).client_id;
  });
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  async function signedIn() {
    const student = await context.newStudentThroughOAuth();
    return signIn(context.app, {
      client_id: clientId,
      email: student.email,
      password: student.password,
      scope: 'profile:read',
    });
  }

  it('rotates the refresh token on every use; the new pair works', async () => {
    const first = await signedIn();
    const res = await refresh(context.app, { client_id: clientId, refresh_token: first.refresh_token }).expect(200);
    assert.notEqual(res.body.refresh_token, first.refresh_token);
    assert.equal(res.headers['cache-control'], 'no-store');
    await context.api.get('/api/users/me').set(bearer(res.body.access_token)).expect(200);
    await refresh(context.app, { client_id: clientId, refresh_token: res.body.refresh_token }).expect(200);
  });

  it('revokes the whole grant when a rotated refresh token is replayed (a stolen copy)', async () => {
    const first = await signedIn();
    const second = (await refresh(context.app, { client_id: clientId, refresh_token: first.refresh_token }).expect(200))
      .body;
    const replay = await refresh(context.app, { client_id: clientId, refresh_token: first.refresh_token }).expect(400);
    assert.equal(replay.body.error, 'invalid_grant');
    // Both the thief's and the rightful client's tokens are now dead.
    const denied = await context.api.get('/api/users/me').set(bearer(second.access_token)).expect(401);
    assert.match(String(denied.headers['www-authenticate']), /error="invalid_token"/);
    assert.equal(
      (await refresh(context.app, { client_id: clientId, refresh_token: second.refresh_token }).expect(400)).body.error,
      'invalid_grant',
    );
  });

  it('refuses a refresh token presented by another client', async () => {
    const tokens = await signedIn();
    const other = (await registerTestClient(['profile:read'])).client_id;
    const res = await refresh(context.app, { client_id: other, refresh_token: tokens.refresh_token }).expect(400);
    assert.equal(res.body.error, 'invalid_grant');
  });

  it('revokes the grant of a refresh token at /oauth/revoke, stopping its access token at once', async () => {
    const tokens = await signedIn();
    await supertest(context.app)
      .post('/oauth/revoke')
      .type('form')
      .send({ client_id: clientId, token: tokens.refresh_token, token_type_hint: 'refresh_token' })
      .expect(200);
    await context.api.get('/api/users/me').set(bearer(tokens.access_token)).expect(401);
    await refresh(context.app, { client_id: clientId, refresh_token: tokens.refresh_token }).expect(400);
  });

  it('revokes the grant of an access token too, and answers 200 for a token it does not know', async () => {
    const tokens = await signedIn();
    await supertest(context.app)
      .post('/oauth/revoke')
      .type('form')
      .send({ client_id: clientId, token: tokens.access_token })
      .expect(200);
    await context.api.get('/api/users/me').set(bearer(tokens.access_token)).expect(401);
    await supertest(context.app)
      .post('/oauth/revoke')
      .type('form')
      .send({ client_id: clientId, token: 'no-such-token' })
      .expect(200);
  });

  it('does not let one client revoke another client’s tokens, and refuses unauthenticated revocation', async () => {
    const tokens = await signedIn();
    const other = (await registerTestClient(['profile:read'])).client_id;
    await supertest(context.app)
      .post('/oauth/revoke')
      .type('form')
      .send({ client_id: other, token: tokens.refresh_token })
      .expect(200);
    await context.api.get('/api/users/me').set(bearer(tokens.access_token)).expect(200);
    const res = await supertest(context.app)
      .post('/oauth/revoke')
      .type('form')
      .send({ token: tokens.refresh_token })
      .expect(401);
    assert.equal(res.body.error, 'invalid_client');
  });

  it('answers an expired access token with 401 and WWW-Authenticate invalid_token', async () => {
    const key = await loadSigningKey(undefined);
    const sixteenMinutesAgo = () => new Date(Date.now() - 16 * 60_000);
    const app = await createApp({
      db: testDatabase().db,
      logger: pino({ level: 'silent' }),
      limitStores: memoryLimitStores(),
      notifications: testNotifications(),
      tokens: accessTokenIssuer(key, { issuer: TEST_ISSUER, now: () => new Date() }),
      webhooks: testWebhookSettings(),
      config: { bodyLimitBytes: 100 * 1024, validateResponses: false, trustProxy: false },
    });
    const student = await context.newStudentThroughOAuth();
    const grant = await testDatabase()
      .db.selectFrom('oauth_grants')
      .select('id')
      .where('user_id', '=', student.id)
      .executeTakeFirstOrThrow();
    const expired = await accessTokenIssuer(key, { issuer: TEST_ISSUER, now: sixteenMinutesAgo }).issue({
      user_id: student.id,
      client_id: 'test',
      scopes: ['profile:read'],
      grant_id: grant.id,
    });
    const res = await contractClient(app).get('/api/users/me').set(bearer(expired.token)).expect(401);
    assert.equal(res.headers['www-authenticate'], 'Bearer realm="general", error="invalid_token"');
  });

  it('serves RFC 8414 metadata and the JWKS that verifies the tokens', async () => {
    const meta = (await supertest(context.app).get('/.well-known/oauth-authorization-server').expect(200)).body;
    assert.equal(meta.issuer, TEST_ISSUER);
    assert.deepEqual(meta.code_challenge_methods_supported, ['S256']);
    assert.ok(meta.scopes_supported.includes('tasks:write'));
    const jwks = (await supertest(context.app).get('/oauth/jwks.json').expect(200)).body;
    const tokens = await signedIn();
    const kid = JSON.parse(Buffer.from(tokens.access_token.split('.')[0]!, 'base64url').toString()).kid;
    assert.ok(
      jwks.keys.some((k: { kid: string; d?: string }) => k.kid === kid && k.d === undefined),
      'the public key is published, never the private part',
    );
  });

  describe('client credentials', () => {
    it('gives a confidential client bound to an account a token that acts for that account', async () => {
      const owner = await context.newStudentThroughOAuth();
      const client = await registerTestClient(['profile:read'], { confidential: true, owner_user_id: owner.id });
      const res = await supertest(context.app)
        .post('/oauth/token')
        .auth(client.client_id, client.client_secret!)
        .type('form')
        .send({ grant_type: 'client_credentials', scope: 'profile:read' })
        .expect(200);
      assert.equal(res.body.refresh_token, undefined, 'client credentials issue no refresh token');
      const me = await context.api.get('/api/users/me').set(bearer(res.body.access_token)).expect(200);
      assert.equal(me.body.id, owner.id);
    });

    it('refuses a wrong client secret with invalid_client', async () => {
      const owner = await context.newStudentThroughOAuth();
      const client = await registerTestClient(['profile:read'], { confidential: true, owner_user_id: owner.id });
      const res = await supertest(context.app)
        .post('/oauth/token')
        .auth(client.client_id, 'secret_wrong')
        .type('form')
        .send({ grant_type: 'client_credentials' })
        .expect(401);
      assert.equal(res.body.error, 'invalid_client');
    });

    it('refuses client credentials to a public client', async () => {
      const res = await supertest(context.app)
        .post('/oauth/token')
        .type('form')
        .send({ grant_type: 'client_credentials', client_id: clientId })
        .expect(400);
      assert.equal(res.body.error, 'invalid_client');
    });
  });
});
