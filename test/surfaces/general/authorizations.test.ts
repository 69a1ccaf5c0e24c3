// Authorized apps: the student lists the apps holding a live grant and revokes one; its tokens and the keys it
// minted stop on the next request, other apps keep working.
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { generalApp } from '../../support/general-app.ts';
import { refresh, registerTestClient, signIn } from '../../support/oauth-flow.ts';

describe('listMyAuthorizations and revokeMyAuthorization', () => {
  let context: Awaited<ReturnType<typeof generalApp>>;
  before(async () => {
    context = await generalApp();
  });
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  it('lists each authorized app once with its scopes, and revoking one stops its tokens and keys only', async () => {
    const student = await context.newStudentThroughOAuth({ scopes: ['keys:manage', 'profile:read'] });
    const reader = (await registerTestClient(['profile:read', 'tasks:read', 'keys:manage'])).client_id;
    const other = (await registerTestClient(['profile:read'])).client_id;
    const login = { email: student.email, password: student.password };
    const phone = await signIn(context.app, { ...login, client_id: reader, scope: 'profile:read keys:manage' });
    const laptop = await signIn(context.app, { ...login, client_id: reader, scope: 'tasks:read' });
    const kept = await signIn(context.app, { ...login, client_id: other, scope: 'profile:read' });
    const key = (
      await context.api
        .post('/api/users/me/api-keys')
        .set(bearer(phone.access_token))
        .send({ name: 'minted by the app', scopes: ['profile:read'] })
        .expect(201)
    ).body.key;

    const listed = (await context.api.get('/api/users/me/authorizations').set(student.headers).expect(200)).body.data;
    const app = listed.find((a: { client_id: string }) => a.client_id === reader);
    assert.ok(app, 'the app signed in twice is listed');
    assert.equal(
      listed.filter((a: { client_id: string }) => a.client_id === reader).length,
      1,
      'two sign-ins, one app',
    );
    assert.deepEqual(app.scopes, ['profile:read', 'keys:manage', 'tasks:read']);
    assert.equal(app.client_name, 'Test app');
    assert.ok(listed.some((a: { client_id: string }) => a.client_id === other));

    await context.api.delete(`/api/users/me/authorizations/${reader}`).set(student.headers).expect(204);
    await context.api.get('/api/users/me').set(bearer(phone.access_token)).expect(401);
    await context.api.get('/api/tasks').set(bearer(laptop.access_token)).expect(401);
    await context.api.get('/api/users/me').set({ 'x-service-api-key': key }).expect(401);
    assert.equal(
      (await refresh(context.app, { client_id: reader, refresh_token: laptop.refresh_token }).expect(400)).body.error,
      'invalid_grant',
    );
    await context.api.get('/api/users/me').set(bearer(kept.access_token)).expect(200);

    const after = (await context.api.get('/api/users/me/authorizations').set(student.headers).expect(200)).body.data;
    assert.equal(
      after.some((a: { client_id: string }) => a.client_id === reader),
      false,
    );
    // A new consent brings the app back.
    const again = await signIn(context.app, { ...login, client_id: reader, scope: 'profile:read' });
    await context.api.get('/api/users/me').set(bearer(again.access_token)).expect(200);
  });

  it('moves last_used_at when the app refreshes its token', async () => {
    const student = await context.newStudentThroughOAuth({ scopes: ['keys:manage'] });
    const client = (await registerTestClient(['profile:read'])).client_id;
    const tokens = await signIn(context.app, {
      email: student.email,
      password: student.password,
      client_id: client,
      scope: 'profile:read',
    });
    const lastUsed = async () =>
      (await context.api.get('/api/users/me/authorizations').set(student.headers).expect(200)).body.data.find(
        (a: { client_id: string }) => a.client_id === client,
      );
    const before = await lastUsed();
    await context.db
      .updateTable('oauth_refresh_tokens')
      .set({ created_at: sql`'2026-01-01T00:00:00Z'` })
      .where('grant_id', 'in', context.db.selectFrom('oauth_grants').select('id').where('client_id', '=', client))
      .execute();
    assert.equal((await lastUsed()).last_used_at, '2026-01-01T00:00:00.000Z');
    await refresh(context.app, { client_id: client, refresh_token: tokens.refresh_token }).expect(200);
    const after = await lastUsed();
    assert.ok(after.last_used_at > '2026-01-01T00:00:00.000Z');
    assert.equal(after.granted_at, before.granted_at);
  });

  it("answers 404 for an app the student has not authorized, and never touches another student's grant", async () => {
    const student = await context.newStudentThroughOAuth({ scopes: ['keys:manage'] });
    const neighbour = await context.newStudentThroughOAuth({ scopes: ['profile:read'] });
    const client = (await registerTestClient(['profile:read'])).client_id;
    const theirs = await signIn(context.app, {
      email: neighbour.email,
      password: neighbour.password,
      client_id: client,
      scope: 'profile:read',
    });
    const res = await context.api.delete(`/api/users/me/authorizations/${client}`).set(student.headers).expect(404);
    assert.equal(res.body.code, 'not_found');
    await context.api.get('/api/users/me').set(bearer(theirs.access_token)).expect(200);
    await context.api.delete('/api/users/me/authorizations/no_such_client').set(student.headers).expect(404);
  });

  it('needs keys:manage (403 insufficient_scope) and one credential (400)', async () => {
    const student = await context.newStudentThroughOAuth({ scopes: ['profile:read'] });
    const res = await context.api.get('/api/users/me/authorizations').set(student.headers).expect(403);
    assert.equal(res.body.code, 'insufficient_scope');
    await context.api.delete('/api/users/me/authorizations/client_x').set(student.headers).expect(403);
    const two = { ...student.headers, 'x-service-api-key': 'svc_live_x' };
    assert.equal(
      (await context.api.get('/api/users/me/authorizations').set(two).expect(400)).body.code,
      'invalid_request',
    );
  });
});
