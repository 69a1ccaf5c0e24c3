// Password guessing through the API (issue 23, item 7): a stolen personal key (profile:write by default) could send
// any number of wrong current passwords to POST /api/users/me/password (403 each) and take the account over with the
// right one. Wrong passwords now count per account, as the sign-in form counts them (server/auth/password-attempts.ts).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { PASSWORD_ATTEMPTS_PER_ACCOUNT } from '../../../server/auth/password-attempts.ts';
import { redisLimitStores } from '../../../server/limits/redis-limit-stores.ts';
import { contractClient } from '../../support/contract.ts';
import { generalApp, newStudentThroughOAuth, type Student } from '../../support/general-app.ts';
import { buildApp } from '../../support/partner-app.ts';

type Api = Awaited<ReturnType<typeof generalApp>>['api'];

const personalKey = async (api: Api, student: Student): Promise<{ 'x-service-api-key': string }> => {
  const created = await api.post('/api/users/me/api-keys').set(student.headers).send({ name: 'a script' }).expect(201);
  assert.ok(created.body.scopes.includes('profile:write'), 'a key has profile:write by default');
  return { 'x-service-api-key': created.body.key };
};
const changePassword = (api: Api, headers: Record<string, string>, current_password: string) =>
  api
    .post('/api/users/me/password')
    .set(headers)
    .send({ current_password, new_password: `new-${randomBytes(8).toString('hex')}` });

describe('password attempts', () => {
  it(`a personal key sending 40 wrong passwords at once gets ${PASSWORD_ATTEMPTS_PER_ACCOUNT} checked, then 429 even for the right one`, async () => {
    const { api, newStudentThroughOAuth } = await generalApp();
    const [alice, bob] = [await newStudentThroughOAuth(), await newStudentThroughOAuth()];
    const key = await personalKey(api, alice);
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => changePassword(api, key, `wrong guess ${i}`)),
    );
    const count = (status: number) => answers.filter((res) => res.status === status).length;
    assert.deepEqual(
      { 403: count(403), 429: count(429) },
      { 403: PASSWORD_ATTEMPTS_PER_ACCOUNT, 429: 40 - PASSWORD_ATTEMPTS_PER_ACCOUNT },
    );

    const held = await changePassword(api, key, alice.password).expect(429);
    assert.equal(held.body.code, 'password_attempts_exceeded');
    const retryAfter = Number(held.headers['retry-after']);
    assert.ok(retryAfter > 0 && retryAfter <= 15 * 60, `Retry-After ${held.headers['retry-after']}`);
    // The old password still signs in: the account was not taken over.
    await api.get('/api/users/me').set(alice.headers).expect(200);
    // Counted per account: another student's change goes through.
    await changePassword(api, bob.headers, bob.password).expect(204);
  });

  it('counts wrong passwords only: a right one in between does not use an attempt up', async () => {
    const { api, newStudentThroughOAuth } = await generalApp();
    const alice = await newStudentThroughOAuth();
    for (let i = 1; i < PASSWORD_ATTEMPTS_PER_ACCOUNT; i++)
      await changePassword(api, alice.headers, 'wrong').expect(403);
    const password = `new-${randomBytes(8).toString('hex')}`;
    await api
      .post('/api/users/me/password')
      .set(alice.headers)
      .send({ current_password: alice.password, new_password: password })
      .expect(204);
    await changePassword(api, alice.headers, 'wrong').expect(403); // the 10th failure
    assert.equal(
      (await changePassword(api, alice.headers, password).expect(429)).body.code,
      'password_attempts_exceeded',
    );
  });

  it('shares the count between processes through Redis', async function () {
    const url = process.env.REDIS_URL;
    if (!url) this.skip(); // needs a real Redis: .ci/run sets REDIS_URL
    const keyPrefix = `rl:test:${randomBytes(4).toString('hex')}:`;
    const stores = [await redisLimitStores(url!, { keyPrefix }), await redisLimitStores(url!, { keyPrefix })];
    try {
      const apps = await Promise.all(stores.map((limitStores) => buildApp({ limitStores })));
      const apis = apps.map((app) => contractClient(app));
      const alice = await newStudentThroughOAuth(apps[0]!);
      for (let i = 0; i < PASSWORD_ATTEMPTS_PER_ACCOUNT; i++)
        await changePassword(apis[i % 2]!, alice.headers, 'wrong').expect(403);
      for (const api of apis)
        assert.equal(
          (await changePassword(api, alice.headers, alice.password).expect(429)).body.code,
          'password_attempts_exceeded',
        );
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
  });
});
