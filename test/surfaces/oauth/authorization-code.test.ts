// The authorization code grant with PKCE, end to end over HTTP: the sign-in page, the code exchange, and the
// refusals a real app and an attacker would meet.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import supertest from 'supertest';
import { createLogger } from '../../../server/process/logger.ts';
import { generalApp, newStudentThroughOAuth } from '../../support/general-app.ts';
import { buildApp } from '../../support/partner-app.ts';
import { authorize, exchangeCode, pkcePair, registerTestClient, TEST_REDIRECT_URI } from '../../support/oauth-flow.ts';

describe('OAuth authorization code with PKCE', () => {
  let context: Awaited<ReturnType<typeof generalApp>>;
  let clientId: string;
  before(async () => {
    context = await generalApp();
    clientId = (await registerTestClient(['profile:read', 'tasks:read'])).client_id;
  });

  const authorizeQuery = (overrides: Record<string, string> = {}) => ({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: TEST_REDIRECT_URI,
    scope: 'profile:read',
    state: 'xyz',
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
    ...overrides,
  });

  it('shows a sign-in page naming the app and the scopes asked for, carrying the request through the form', async () => {
    const res = await supertest(context.app)
      .get('/oauth/authorize')
      .query(authorizeQuery({ scope: 'profile:read tasks:read' }))
      .expect(200);
    assert.match(res.headers['content-type']!, /text\/html/);
    assert.match(res.text, /Test app/);
    assert.match(res.text, /tasks:read/);
    assert.match(res.text, /name="code_challenge" value="[\w-]{43}"/);
    assert.match(res.headers['content-security-policy']!, /form-action 'self' http:\/\/127\.0\.0\.1:8765/);
    assert.equal(res.headers['cache-control'], 'no-store');
  });

  it('issues a 15-minute JWT access token and a refresh token for a code and its verifier', async () => {
    const student = await context.newStudentThroughOAuth();
    const { code, verifier } = await authorize(context.app, {
      client_id: clientId,
      email: student.email,
      password: student.password,
      scope: 'profile:read',
    });
    const tokens = await exchangeCode(context.app, { client_id: clientId, code, verifier });
    assert.equal(tokens.token_type, 'Bearer');
    assert.ok(tokens.expires_in > 890 && tokens.expires_in <= 900, `expires_in ${tokens.expires_in} is 15 minutes`);
    assert.match(tokens.refresh_token, /^[0-9a-f]{40,}$/);
    assert.equal(tokens.scope, 'profile:read');
    const header = JSON.parse(Buffer.from(tokens.access_token.split('.')[0]!, 'base64url').toString());
    assert.equal(header.typ, 'at+jwt');
    const me = await context.api.get('/api/users/me').set('authorization', `Bearer ${tokens.access_token}`).expect(200);
    assert.equal(me.body.id, student.id);
  });

  it('grants what the client may have when the request names no scope, except account:export, which is asked for by name only', async () => {
    const exporter = (await registerTestClient(['profile:read', 'account:export'])).client_id;
    const student = await context.newStudentThroughOAuth();
    const page = await supertest(context.app)
      .get('/oauth/authorize')
      .query(authorizeQuery({ client_id: exporter, scope: '' }))
      .expect(200);
    assert.doesNotMatch(page.text, /account:export/, 'the consent page does not offer it');
    const { code, verifier } = await authorize(context.app, {
      client_id: exporter,
      email: student.email,
      password: student.password,
      scope: '',
    });
    const tokens = await exchangeCode(context.app, { client_id: exporter, code, verifier });
    assert.equal(tokens.scope, 'profile:read');
    const res = await context.api
      .get('/api/users/me/export')
      .set('authorization', `Bearer ${tokens.access_token}`)
      .expect(403);
    assert.equal(res.body.code, 'insufficient_scope');
    // Asked for by name, it is granted.
    const named = await authorize(context.app, {
      client_id: exporter,
      email: student.email,
      password: student.password,
      scope: 'account:export',
    });
    assert.equal((await exchangeCode(context.app, { client_id: exporter, ...named })).scope, 'account:export');
  });

  it('refuses a code exchanged with the wrong verifier', async () => {
    const student = await context.newStudentThroughOAuth();
    const { code } = await authorize(context.app, {
      client_id: clientId,
      email: student.email,
      password: student.password,
      scope: 'profile:read',
    });
    const res = await supertest(context.app)
      .post('/oauth/token')
      .type('form')
      .send({
        grant_type: 'authorization_code',
        client_id: clientId,
        code,
        redirect_uri: TEST_REDIRECT_URI,
        code_verifier: pkcePair().verifier,
      })
      .expect(400);
    assert.equal(res.body.error, 'invalid_grant');
  });

  it('treats a second exchange of a code as a replay: refused, and the tokens of the first exchange are revoked', async () => {
    const student = await context.newStudentThroughOAuth();
    const { code, verifier } = await authorize(context.app, {
      client_id: clientId,
      email: student.email,
      password: student.password,
      scope: 'profile:read',
    });
    const first = await exchangeCode(context.app, { client_id: clientId, code, verifier });
    const replay = await supertest(context.app)
      .post('/oauth/token')
      .type('form')
      .send({
        grant_type: 'authorization_code',
        client_id: clientId,
        code,
        redirect_uri: TEST_REDIRECT_URI,
        code_verifier: verifier,
      })
      .expect(400);
    assert.equal(replay.body.error, 'invalid_grant');
    await context.api.get('/api/users/me').set('authorization', `Bearer ${first.access_token}`).expect(401);
  });

  it('requires PKCE with S256: without it the app gets invalid_request at its redirect URI', async () => {
    const res = await supertest(context.app)
      .get('/oauth/authorize')
      .query(authorizeQuery({ code_challenge_method: 'plain' }))
      .expect(303);
    const location = new URL(res.headers.location!);
    assert.equal(location.origin + location.pathname, TEST_REDIRECT_URI);
    assert.equal(location.searchParams.get('error'), 'invalid_request');
    assert.equal(location.searchParams.get('state'), 'xyz');
  });

  it('never redirects to an unregistered redirect URI or for an unknown client', async () => {
    await supertest(context.app)
      .get('/oauth/authorize')
      .query(authorizeQuery({ redirect_uri: 'https://attacker.example/cb' }))
      .expect(400);
    await supertest(context.app)
      .get('/oauth/authorize')
      .query(authorizeQuery({ client_id: 'client_unknown' }))
      .expect(400);
  });

  it('refuses scopes beyond those of the client with invalid_scope', async () => {
    const res = await supertest(context.app)
      .get('/oauth/authorize')
      .query(authorizeQuery({ scope: 'ai:chat' }))
      .expect(303);
    assert.equal(new URL(res.headers.location!).searchParams.get('error'), 'invalid_scope');
  });

  it('shows the page again with 401 for a wrong password, and redirects access_denied when the student denies', async () => {
    const student = await context.newStudentThroughOAuth();
    const wrong = await supertest(context.app)
      .post('/oauth/authorize')
      .type('form')
      .send({ ...authorizeQuery(), email: student.email, password: 'not the password', decision: 'allow' })
      .expect(401);
    assert.match(wrong.text, /e-mail or password is wrong/);
    const denied = await supertest(context.app)
      .post('/oauth/authorize')
      .type('form')
      .send({ ...authorizeQuery(), decision: 'deny' })
      .expect(303);
    assert.equal(new URL(denied.headers.location!).searchParams.get('error'), 'access_denied');
  });

  it('keeps scopes the student did not grant out of the token (403 insufficient_scope)', async () => {
    const student = await context.newStudentThroughOAuth();
    const { code, verifier } = await authorize(context.app, {
      client_id: clientId,
      email: student.email,
      password: student.password,
      scope: 'tasks:read',
    });
    const tokens = await exchangeCode(context.app, { client_id: clientId, code, verifier });
    const res = await context.api
      .get('/api/users/me')
      .set('authorization', `Bearer ${tokens.access_token}`)
      .expect(403);
    assert.equal(res.body.code, 'insufficient_scope');
  });
});

describe('OAuth sign-in page hygiene', () => {
  it('carries only the authorization request through the form: a link cannot plant a password or a decision', async () => {
    const { app } = await generalApp();
    const { client_id } = await registerTestClient(['profile:read']);
    const res = await supertest(app)
      .get('/oauth/authorize')
      .query({
        response_type: 'code',
        client_id,
        redirect_uri: TEST_REDIRECT_URI,
        code_challenge: pkcePair().challenge,
        code_challenge_method: 'S256',
        password: 'planted',
        decision: 'deny',
        email: 'victim@example.com',
      })
      .expect(200);
    assert.doesNotMatch(res.text, /type="hidden" name="(email|password|decision)"/);
    assert.doesNotMatch(res.text, /planted|victim@example\.com/);
  });

  it('never writes the authorization code or tokens to the log', async () => {
    const lines: string[] = [];
    const logger = createLogger(
      'info',
      new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) }),
    );
    const app = await buildApp({ logger });
    const { client_id } = await registerTestClient(['profile:read']);
    const student = await newStudentThroughOAuth(app);
    const { code, verifier } = await authorize(app, {
      client_id,
      email: student.email,
      password: student.password,
      scope: 'profile:read',
    });
    const tokens = await exchangeCode(app, { client_id, code, verifier });
    assert.ok(lines.length > 0, 'requests were logged');
    for (const secret of [code, tokens.access_token, tokens.refresh_token, student.password]) {
      assert.ok(!lines.some((line) => line.includes(secret)), 'a credential reached the log');
    }
  });
});
