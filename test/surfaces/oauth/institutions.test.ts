// Institutional access over the real endpoints: a student consents to an institution on the ordinary consent page,
// the institution exchanges its own credential for a short-lived token of that one student (RFC 8693) at
// /oauth/token, and calls the general surface with it, within the scopes the student granted and no further.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import supertest from 'supertest';
import { disableInstitution } from '../../../db/queries/oauth.ts';
import { registerClient } from '../../../server/oauth/clients.ts';
import {
  ACCESS_TOKEN_TYPE,
  EXCHANGED_TOKEN_TTL_SECONDS,
  STUDENT_ID_TOKEN_TYPE,
  TOKEN_EXCHANGE_GRANT,
} from '../../../server/oauth/token-exchange.ts';
import { generalApp, type Student } from '../../support/general-app.ts';
import { authorize, registerTestClient, TEST_REDIRECT_URI } from '../../support/oauth-flow.ts';
import { testDatabase } from '../../support/shared-database.ts';

describe('institutions: token exchange for one consenting student', () => {
  let context: Awaited<ReturnType<typeof generalApp>>;
  let institution: { client_id: string; client_secret: string };
  before(async () => {
    context = await generalApp();
    institution = await newInstitution();
  });

  async function newInstitution() {
    const created = await registerClient(testDatabase().db, {
      name: 'Almaty School 42',
      redirect_uris: [TEST_REDIRECT_URI],
      scopes: ['profile:read', 'tasks:read', 'tasks:write'],
      confidential: true,
      institution: true,
    });
    return { client_id: created.client_id, client_secret: created.client_secret! };
  }

  /** The student signs in on the consent page and allows the institution; the code it redirects with is not needed. */
  async function consent(student: Student, scope: string, to = institution) {
    await authorize(context.app, { client_id: to.client_id, email: student.email, password: student.password, scope });
  }

  function exchange(
    subject: string,
    extra: Record<string, string | string[]> = {},
    as: { client_id: string; client_secret: string } = institution,
  ) {
    return supertest(context.app)
      .post('/oauth/token')
      .type('form')
      .send({
        grant_type: TOKEN_EXCHANGE_GRANT,
        ...as,
        subject_token: subject,
        subject_token_type: STUDENT_ID_TOKEN_TYPE,
        ...extra,
      });
  }

  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  it('gives a consenting student’s data with the granted scopes only: a short-lived token, no refresh token', async () => {
    const student = await context.newStudentThroughOAuth();
    await consent(student, 'profile:read tasks:read');
    const res = await exchange(student.id).expect(200);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(res.body.token_type, 'Bearer');
    assert.equal(res.body.issued_token_type, ACCESS_TOKEN_TYPE);
    assert.equal(res.body.scope, 'profile:read tasks:read');
    assert.equal(res.body.refresh_token, undefined);
    assert.ok(
      res.body.expires_in > EXCHANGED_TOKEN_TTL_SECONDS - 60 && res.body.expires_in <= EXCHANGED_TOKEN_TTL_SECONDS,
      `expires_in ${res.body.expires_in}`,
    );

    const token = bearer(res.body.access_token);
    assert.equal((await context.api.get('/api/users/me').set(token).expect(200)).body.id, student.id);
    await context.api.get('/api/tasks').set(token).expect(200);
    // A write the student did not grant, though the institution may ask for tasks:write.
    const denied = await context.api
      .post('/api/tasks')
      .set(token)
      .send({ title: 'Homework', due_at: '2026-12-01T10:00:00Z', course: null })
      .expect(403);
    assert.equal(denied.body.code, 'insufficient_scope');
  });

  it('narrows to the scope asked for, and refuses a scope beyond the grant or the institution with invalid_scope', async () => {
    const student = await context.newStudentThroughOAuth();
    await consent(student, 'profile:read tasks:read');
    const narrow = await exchange(student.id, { scope: 'profile:read' }).expect(200);
    assert.equal(narrow.body.scope, 'profile:read');
    await context.api.get('/api/tasks').set(bearer(narrow.body.access_token)).expect(403);

    assert.equal((await exchange(student.id, { scope: 'tasks:write' }).expect(400)).body.error, 'invalid_scope');
    assert.equal((await exchange(student.id, { scope: 'keys:manage' }).expect(400)).body.error, 'invalid_scope');
  });

  it('answers a student who did not consent exactly as an unknown or malformed id: invalid_grant', async () => {
    const student = await context.newStudentThroughOAuth(); // signed in to the test app, never to the institution
    const other = await newInstitution();
    await consent(student, 'profile:read', other); // consent to another institution is no consent to this one
    const refusals = await Promise.all(
      [student.id, randomUUID(), 'kim@example.com'].map(async (subject) => (await exchange(subject).expect(400)).body),
    );
    assert.equal(refusals[0].error, 'invalid_grant');
    assert.deepEqual(refusals[1], refusals[0]);
    assert.deepEqual(refusals[2], refusals[0]);
    // The scope check that comes before the lookup says nothing either: the same answer for both.
    const scoped = await Promise.all(
      [student.id, randomUUID()].map(
        async (subject) => (await exchange(subject, { scope: 'keys:manage' }).expect(400)).body,
      ),
    );
    assert.deepEqual(scoped[0], scoped[1]);
  });

  it('stops both new exchanges and tokens already issued once the student revokes the grant', async () => {
    const student = await context.newStudentThroughOAuth();
    await consent(student, 'profile:read');
    const issued = (await exchange(student.id).expect(200)).body.access_token;
    await context.api.get('/api/users/me').set(bearer(issued)).expect(200);

    await context.api.delete(`/api/users/me/authorizations/${institution.client_id}`).set(student.headers).expect(204);
    const stopped = await context.api.get('/api/users/me').set(bearer(issued)).expect(401);
    assert.match(String(stopped.headers['www-authenticate']), /error="invalid_token"/);
    assert.equal((await exchange(student.id).expect(400)).body.error, 'invalid_grant');

    await consent(student, 'profile:read'); // consenting again brings it back
    await exchange(student.id).expect(200);
  });

  it('refuses a wrong secret with invalid_client, in the body and over HTTP Basic', async () => {
    const student = await context.newStudentThroughOAuth();
    await consent(student, 'profile:read');
    const wrong = { client_id: institution.client_id, client_secret: `${institution.client_secret}x` };
    assert.equal((await exchange(student.id, {}, wrong).expect(400)).body.error, 'invalid_client');
    const basic = await supertest(context.app)
      .post('/oauth/token')
      .auth(wrong.client_id, wrong.client_secret)
      .type('form')
      .send({ grant_type: TOKEN_EXCHANGE_GRANT, subject_token: student.id, subject_token_type: STUDENT_ID_TOKEN_TYPE })
      .expect(401);
    assert.equal(basic.body.error, 'invalid_client');
    const right = await supertest(context.app)
      .post('/oauth/token')
      .auth(institution.client_id, institution.client_secret)
      .type('form')
      .send({ grant_type: TOKEN_EXCHANGE_GRANT, subject_token: student.id, subject_token_type: STUDENT_ID_TOKEN_TYPE })
      .expect(200);
    assert.equal(right.body.scope, 'profile:read');
  });

  it('refuses the grant type to an ordinary app with unauthorized_client, even for a student who consented to it', async () => {
    const app = (await registerTestClient(['profile:read'], { confidential: true })) as {
      client_id: string;
      client_secret: string;
    };
    const student = await context.newStudentThroughOAuth();
    await consent(student, 'profile:read', app);
    const res = await exchange(student.id, {}, app).expect(400);
    assert.equal(res.body.error, 'unauthorized_client');
  });

  it('refuses a request that does not name the student our way with invalid_request', async () => {
    const student = await context.newStudentThroughOAuth();
    await consent(student, 'profile:read');
    const wrong: Record<string, string>[] = [
      { subject_token_type: 'urn:ietf:params:oauth:token-type:access_token' },
      { requested_token_type: 'urn:ietf:params:oauth:token-type:refresh_token' },
      { actor_token: 'x' },
    ];
    for (const extra of wrong) {
      assert.equal(
        (await exchange(student.id, extra).expect(400)).body.error,
        'invalid_request',
        JSON.stringify(extra),
      );
    }
    const noSubject = await supertest(context.app)
      .post('/oauth/token')
      .type('form')
      .send({ grant_type: TOKEN_EXCHANGE_GRANT, ...institution, subject_token_type: STUDENT_ID_TOKEN_TYPE })
      .expect(400);
    assert.equal(noSubject.body.error, 'invalid_request');
  });

  it('ends an institution for good when the operator revokes it: its credential and its tokens stop at once', async () => {
    const revoked = await newInstitution();
    const student = await context.newStudentThroughOAuth();
    await consent(student, 'profile:read', revoked);
    const issued = (await exchange(student.id, {}, revoked).expect(200)).body.access_token;
    assert.ok(await disableInstitution(testDatabase().db, revoked.client_id, new Date()));
    await context.api.get('/api/users/me').set(bearer(issued)).expect(401);
    assert.equal((await exchange(student.id, {}, revoked).expect(400)).body.error, 'invalid_client');
  });

  it('refuses an audience or resource other than this API with invalid_target (RFC 8693 §2.2.2)', async () => {
    const student = await context.newStudentThroughOAuth();
    await consent(student, 'profile:read');
    const api = `${(await supertest(context.app).get('/.well-known/oauth-authorization-server').expect(200)).body.issuer}/api`;
    const targets: Array<Record<string, string | string[]>> = [
      { audience: 'https://another-service.example' },
      { resource: 'https://another-service.example/api' },
      { audience: [api, 'urn:other'] },
    ];
    for (const extra of targets) {
      const res = await exchange(student.id, extra).expect(400);
      assert.equal(res.body.error, 'invalid_target', JSON.stringify(extra));
    }
    // This API named either way is its own audience.
    await exchange(student.id, { audience: api }).expect(200);
    await exchange(student.id, { resource: `${api}/tasks` }).expect(200);
  });

  it('never counts an exchanged token as a fresh sign-in: it cannot delete the account minutes after the consent', async () => {
    const created = await registerClient(testDatabase().db, {
      name: 'Writing institution',
      redirect_uris: [TEST_REDIRECT_URI],
      scopes: ['profile:read', 'profile:write'],
      confidential: true,
      institution: true,
    });
    const writer = { client_id: created.client_id, client_secret: created.client_secret! };
    const student = await context.newStudentThroughOAuth();
    await consent(student, 'profile:read profile:write', writer);
    const token = (await exchange(student.id, {}, writer).expect(200)).body.access_token;
    const res = await context.api.delete('/api/users/me').set(bearer(token)).expect(403);
    assert.equal(res.body.code, 'reauthentication_required');
    await context.api.get('/api/users/me').set(student.headers).expect(200);
  });

  it('is listed in the authorization server metadata', async () => {
    const res = await supertest(context.app).get('/.well-known/oauth-authorization-server').expect(200);
    assert.ok(res.body.grant_types_supported.includes(TOKEN_EXCHANGE_GRANT));
  });
});
