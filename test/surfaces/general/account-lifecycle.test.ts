// The account's lifecycle over HTTP: changing the password (and what it ends), deleting the account, exporting it.
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import supertest from 'supertest';
import { LEADERBOARDS_CHANNEL } from '../../../db/queries/leaderboards.ts';
import { insertPersonalKey } from '../../../db/queries/personal-api-keys.ts';
import { insertWithFreshKey } from '../../../server/auth/api-keys.ts';
import { recordPayment } from '../../../services/payments/record-payment.ts';
import { ALL_SCOPES } from '../../../server/auth/scopes.ts';
import { generalApp, type Student } from '../../support/general-app.ts';
import { changeNotified } from '../../support/next-notification.ts';
import { issueTestKey } from '../../support/partner-app.ts';
import { pkcePair, refresh, registerTestClient, signIn, TEST_REDIRECT_URI } from '../../support/oauth-flow.ts';

describe('account lifecycle', () => {
  let context: Awaited<ReturnType<typeof generalApp>>;
  let clientId: string;
  before(async () => {
    context = await generalApp();
    clientId = (await registerTestClient([...ALL_SCOPES])).client_id;
  });
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  /** A personal key made outside any sign-in (as an operator or the seed makes one): the student's own. */
  const ownPersonalKey = async (userId: string) =>
    (
      await insertWithFreshKey(({ prefix, hash }) =>
        insertPersonalKey(context.db, {
          user_id: userId,
          prefix,
          key_hash: hash,
          name: 'own',
          scopes: ['profile:read'],
          grant_id: null,
        }),
      )
    ).key;
  const signInAs = (student: Pick<Student, 'email' | 'password'>, password = student.password) =>
    signIn(context.app, { client_id: clientId, email: student.email, password, scope: ALL_SCOPES.join(' ') });
  /** The sign-in form's answer to these credentials: 303 (signed in) or 401 (re-rendered). */
  const signInStatus = async (email: string, password: string) =>
    (
      await supertest(context.app).post('/oauth/authorize').type('form').send({
        response_type: 'code',
        client_id: clientId,
        redirect_uri: TEST_REDIRECT_URI,
        scope: 'profile:read',
        state: 's',
        code_challenge: pkcePair().challenge,
        code_challenge_method: 'S256',
        email,
        password,
        decision: 'allow',
      })
    ).status;

  describe('changeMyPassword', () => {
    it('needs the current password (403 reauthentication_required) and changes nothing without it', async () => {
      const student = await context.newStudentThroughOAuth();
      const res = await context.api
        .post('/api/users/me/password')
        .set(student.headers)
        .send({ current_password: 'not the password', new_password: 'a brand new password' })
        .expect(403);
      assert.equal(res.body.code, 'reauthentication_required');
      assert.equal(await signInStatus(student.email, student.password), 303);
    });

    it('ends every other sign-in with its access tokens and the keys minted through it; keeps this sign-in and the own keys', async () => {
      const student = await context.newStudentThroughOAuth();
      const phone = await signInAs(student);
      const laptop = await signInAs(student);
      const minted = (
        await context.api
          .post('/api/users/me/api-keys')
          .set(bearer(laptop.access_token))
          .send({ name: 'laptop script', scopes: ['profile:read'] })
          .expect(201)
      ).body.key;
      const ownKey = await ownPersonalKey(student.id);
      const newPassword = 'a brand new password';
      await context.api
        .post('/api/users/me/password')
        .set(bearer(phone.access_token))
        .send({ current_password: student.password, new_password: newPassword })
        .expect(204);

      assert.equal(
        (await refresh(context.app, { client_id: clientId, refresh_token: laptop.refresh_token }).expect(400)).body
          .error,
        'invalid_grant',
      );
      // What was taken before the change keeps nothing: the laptop's access token (minutes left) cannot mint a key,
      // and the key it minted before is refused too.
      await context.api
        .post('/api/users/me/api-keys')
        .set(bearer(laptop.access_token))
        .send({ name: 'after the change' })
        .expect(401);
      await context.api.get('/api/users/me').set({ 'x-service-api-key': minted }).expect(401);
      // Kept: the sign-in that changed the password, and the student's own key (made outside any sign-in).
      await context.api.get('/api/users/me').set(bearer(phone.access_token)).expect(200);
      await refresh(context.app, { client_id: clientId, refresh_token: phone.refresh_token }).expect(200);
      await context.api.get('/api/users/me').set({ 'x-service-api-key': ownKey }).expect(200);
      assert.equal(await signInStatus(student.email, student.password), 401);
      assert.equal(await signInStatus(student.email, newPassword), 303);
    });

    it('made with a key minted through a sign-in, keeps that sign-in (its key) and ends the others', async () => {
      const student = await context.newStudentThroughOAuth();
      const other = await signInAs(student);
      const key = (
        await context.api
          .post('/api/users/me/api-keys')
          .set(student.headers)
          .send({ name: 'changer', scopes: ['profile:read', 'profile:write'] })
          .expect(201)
      ).body.key;
      await context.api
        .post('/api/users/me/password')
        .set({ 'x-service-api-key': key })
        .send({ current_password: student.password, new_password: 'a brand new password' })
        .expect(204);
      await context.api.get('/api/users/me').set({ 'x-service-api-key': key }).expect(200);
      await context.api.get('/api/users/me').set(student.headers).expect(200);
      await context.api.get('/api/users/me').set(bearer(other.access_token)).expect(401);
    });

    it('refuses a short new password with 400 and keeps the old one', async () => {
      const student = await context.newStudentThroughOAuth();
      const res = await context.api
        .post('/api/users/me/password')
        .set(student.headers)
        .send({ current_password: student.password, new_password: 'short' })
        .expect(400);
      assert.equal(res.body.code, 'invalid_request');
      assert.equal(await signInStatus(student.email, student.password), 303);
    });
  });

  describe('deleteMyAccount', () => {
    /** Moves the moment the student typed the password back in time, so their tokens are no longer fresh. */
    const ageSignIns = (student: Student, minutes: number) =>
      context.db
        .updateTable('oauth_grants')
        .set({ authenticated_at: sql`now() - make_interval(mins => ${minutes})` })
        .where('user_id', '=', student.id)
        .execute();

    it('needs a sign-in at most 5 minutes old: an older one or a personal key gets 403 and deletes nothing', async () => {
      const student = await context.newStudentThroughOAuth();
      const key = (
        await context.api
          .post('/api/users/me/api-keys')
          .set(student.headers)
          .send({ name: 'script', scopes: ['profile:read', 'profile:write'] })
          .expect(201)
      ).body.key;
      await context.api.delete('/api/users/me').set({ 'x-service-api-key': key }).expect(403); // a key is never a fresh sign-in
      await ageSignIns(student, 6);
      const res = await context.api.delete('/api/users/me').set(student.headers).expect(403);
      assert.equal(res.body.code, 'reauthentication_required');
      await context.api.get('/api/users/me').set(student.headers).expect(200);
      // Two credentials are refused before either is looked up (400), as on every operation.
      await context.api
        .delete('/api/users/me')
        .set({ ...student.headers, 'x-service-api-key': key })
        .expect(400);
      // Signing in again (typing the password) makes the new token fresh.
      const again = await signInAs(student);
      await context.api.delete('/api/users/me').set(bearer(again.access_token)).expect(204);
      await context.api.get('/api/users/me').set({ 'x-service-api-key': key }).expect(401);
    });

    it('erases the student at once, keeps payments anonymised, and takes the nickname off v1', async () => {
      const student = await context.newStudentThroughOAuth();
      const { key: partnerKey } = await issueTestKey();
      const v1 = (path: string) => context.api.get(path).set('X-Service-API-Key', partnerKey);
      await context.api
        .post('/api/tasks')
        .set(student.headers)
        .send({ title: 'Anatomy', due_at: '2030-01-01T10:00:00Z', course: null })
        .expect(201);
      const { payment } = await recordPayment(
        context.db,
        {
          user_id: student.id,
          plan: 'plus',
          amount: 1990,
          currency: 'KZT',
          provider: 'manual',
          provider_event_id: `manual-${student.id}`,
          paid_at: new Date(),
        },
        new Date(),
      );
      // Boards kept in memory show a change once its notification arrives (db/queries/leaderboards.ts).
      await changeNotified(LEADERBOARDS_CHANNEL, () =>
        context.db
          .updateTable('users')
          .set({ xp: 2_000_000_000, last_active_at: new Date() })
          .where('id', '=', student.id)
          .execute(),
      );
      await v1(`/api/v1/users/${student.nickname}/public`).expect(200);
      assert.equal((await v1('/api/v1/leaderboards/global').expect(200)).body[0].nickname, student.nickname);

      // newStudentThroughOAuth signed in just now
      await changeNotified(LEADERBOARDS_CHANNEL, async () =>
        context.api.delete('/api/users/me').set(student.headers).expect(204),
      );

      await context.api.get('/api/users/me').set(student.headers).expect(401);
      await v1(`/api/v1/users/${student.nickname}/public`).expect(404);
      const board = (await v1('/api/v1/leaderboards/global').expect(200)).body as { nickname: string }[];
      assert.equal(
        board.some((row) => row.nickname === student.nickname),
        false,
      );
      for (const table of ['users', 'tasks', 'oauth_grants', 'api_keys'] as const) {
        const column = table === 'users' ? 'id' : 'user_id';
        const left = await context.db.selectFrom(table).select(column).where(column, '=', student.id).execute();
        assert.deepEqual(left, [], `${table} keeps nothing of the student`);
      }
      const kept = await context.db
        .selectFrom('payments')
        .select(['user_id', 'amount'])
        .where('id', '=', payment.id)
        .executeTakeFirstOrThrow();
      assert.deepEqual(kept, { user_id: null, amount: 1990 });
      // The e-mail and nickname are free again.
      await context.api
        .post('/api/accounts')
        .send({
          email: student.email,
          password: 'a brand new password',
          nickname: student.nickname,
          first_name: 'Again',
        })
        .expect(201);
    });
  });
});
