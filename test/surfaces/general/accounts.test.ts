import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { generalApp } from '../../support/general-app.ts';
import { testDatabase } from '../../support/shared-database.ts';

const fresh = () => `n_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
const account = (nickname = fresh()) => ({
  email: `${nickname}@example.com`,
  password: 'long enough password',
  nickname,
  first_name: 'Dana',
});

describe('createAccount', () => {
  it('creates an account with an Argon2id password hash and returns its profile', async () => {
    const { api } = await generalApp();
    const body = { ...account(), time_zone: 'Europe/Moscow', country_code: 'ru' };
    const res = await api.post('/api/accounts').send(body).expect(201);
    assert.equal(res.body.email, body.email);
    assert.equal(res.body.plan, 'free');
    assert.equal(res.body.time_zone, 'Europe/Moscow');
    assert.equal('password' in res.body, false);
    const row = await testDatabase()
      .db.selectFrom('users')
      .select('password_hash')
      .where('id', '=', res.body.id)
      .executeTakeFirstOrThrow();
    assert.match(row.password_hash!, /^\$argon2id\$/);
  });

  it('answers 409 for a taken e-mail or nickname, whatever their case', async () => {
    const { api } = await generalApp();
    const first = account();
    await api.post('/api/accounts').send(first).expect(201);
    const sameEmail = await api
      .post('/api/accounts')
      .send({ ...account(), email: first.email.toUpperCase() })
      .expect(409);
    assert.match(sameEmail.body.detail, /e-mail/);
    const sameNickname = await api
      .post('/api/accounts')
      .send({ ...account(), nickname: first.nickname.toUpperCase() })
      .expect(409);
    assert.match(sameNickname.body.detail, /nickname/);
  });

  it('answers 400 for a short password, a bad nickname, an unknown field or an unknown time zone, and stores nothing', async () => {
    const { api } = await generalApp();
    const bad = [
      { ...account(), password: 'short' },
      { ...account(), nickname: 'has space' },
      { ...account(), is_admin: true },
      { ...account(), time_zone: 'Mars/Olympus_Mons' },
    ];
    for (const body of bad) {
      const res = await api.post('/api/accounts').send(body).expect(400);
      assert.equal(res.body.code, 'invalid_request');
      const stored = await testDatabase()
        .db.selectFrom('users')
        .select('id')
        .where('nickname', '=', body.nickname)
        .executeTakeFirst();
      assert.equal(stored, undefined);
    }
  });

  it('names the property a body must not have, in the path and the message of the 400', async () => {
    const { api } = await generalApp();
    const res = await api
      .post('/api/accounts')
      .send({ ...account(), country: 'kz' })
      .expect(400);
    const message = 'is not a property of this object ("country" must NOT be sent)';
    assert.deepEqual(res.body.errors, [{ path: 'requestBody.country', message }]);
  });

  it('limits account creation to 10 an hour per client address (429 with Retry-After); taken names count', async () => {
    const { api } = await generalApp(); // a fresh app has fresh counters
    const first = account();
    await api.post('/api/accounts').send(first).expect(201);
    for (let i = 0; i < 9; i++)
      await api
        .post('/api/accounts')
        .send({ ...account(), email: first.email })
        .expect(409);
    const res = await api.post('/api/accounts').send(account()).expect(429);
    assert.ok(Number(res.headers['retry-after']) > 0);
  });

  it('does not count invalid forms (400) against the address: ten typos, then the account is made', async () => {
    const { api } = await generalApp();
    for (let i = 0; i < 12; i++)
      await api
        .post('/api/accounts')
        .send({ ...account(), password: 'x' })
        .expect(400);
    const made = await api.post('/api/accounts').send(account()).expect(201);
    // The quota is the one a full hour of sign-ups leaves: 9 more, then refused.
    assert.match(String(made.headers['ratelimit']), /"hour"; r=9;/);
  });
});
