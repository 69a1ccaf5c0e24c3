// The account's lifecycle over HTTP: changing the password (and what it ends), deleting the account, exporting it.
import assert from 'node:assert/strict';
import supertest from 'supertest';
import { ALL_SCOPES } from '../../server/general/scopes.ts';
import { generalApp, type Student } from '../support/general-app.ts';
import { pkcePair, refresh, registerTestClient, signIn, TEST_REDIRECT_URI } from '../support/oauth-flow.ts';

describe('account lifecycle', () => {
  let context: Awaited<ReturnType<typeof generalApp>>;
  let clientId: string;
  before(async () => {
    context = await generalApp();
    clientId = (await registerTestClient([...ALL_SCOPES])).client_id;
  });
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const signInAs = (student: Pick<Student, 'email' | 'password'>, password = student.password) =>
    signIn(context.app, { client_id: clientId, email: student.email, password, scope: ALL_SCOPES.join(' ') });
  /** The sign-in form's answer to these credentials: 303 (signed in) or 401 (re-rendered). */
  const signInStatus = async (email: string, password: string) =>
    (
      await supertest(context.app)
        .post('/oauth/authorize')
        .type('form')
        .send({ response_type: 'code', client_id: clientId, redirect_uri: TEST_REDIRECT_URI, scope: 'profile:read', state: 's', code_challenge: pkcePair().challenge, code_challenge_method: 'S256', email, password, decision: 'allow' })
    ).status;

  describe('changeMyPassword', () => {
    it('needs the current password (403 reauthentication_required) and changes nothing without it', async () => {
      const student = await context.newStudent();
      const res = await context.api.post('/api/users/me/password').set(student.headers).send({ current_password: 'not the password', new_password: 'a brand new password' }).expect(403);
      assert.equal(res.body.code, 'reauthentication_required');
      assert.equal(await signInStatus(student.email, student.password), 303);
    });

    it("ends the other sign-ins' refresh tokens, keeps this sign-in, grants and personal keys, and swaps the password", async () => {
      const student = await context.newStudent();
      const phone = await signInAs(student);
      const laptop = await signInAs(student);
      const key = (await context.api.post('/api/users/me/api-keys').set(bearer(laptop.access_token)).send({ name: 'laptop script', scopes: ['profile:read'] }).expect(201)).body.key;
      const newPassword = 'a brand new password';
      await context.api.post('/api/users/me/password').set(bearer(phone.access_token)).send({ current_password: student.password, new_password: newPassword }).expect(204);

      assert.equal((await refresh(context.app, { client_id: clientId, refresh_token: laptop.refresh_token }).expect(400)).body.error, 'invalid_grant');
      // The grant lives on: the key minted through it works, and so does the laptop's access token until it expires.
      await context.api.get('/api/users/me').set({ 'x-service-api-key': key }).expect(200);
      await context.api.get('/api/users/me').set(bearer(laptop.access_token)).expect(200);
      // The sign-in that changed the password keeps refreshing.
      await refresh(context.app, { client_id: clientId, refresh_token: phone.refresh_token }).expect(200);
      assert.equal(await signInStatus(student.email, student.password), 401);
      assert.equal(await signInStatus(student.email, newPassword), 303);
    });

    it('refuses a short new password with 400 and keeps the old one', async () => {
      const student = await context.newStudent();
      const res = await context.api.post('/api/users/me/password').set(student.headers).send({ current_password: student.password, new_password: 'short' }).expect(400);
      assert.equal(res.body.code, 'invalid_request');
      assert.equal(await signInStatus(student.email, student.password), 303);
    });
  });
});
