// The sign-in form's throttle against password guessing: failed sign-ins count per client address and per account,
// so neither one address trying many accounts nor many addresses trying one account get far.
import assert from 'node:assert/strict';
import { pino } from 'pino';
import supertest from 'supertest';
import { createApp } from '../../../app/app.ts';
import { memoryLimitStores } from '../../../server/limits/rate-limits.ts';
import { newStudentThroughOAuth } from '../../support/general-app.ts';
import { pkcePair, registerTestClient, TEST_REDIRECT_URI } from '../../support/oauth-flow.ts';
import { testNotifications, testTokenIssuer, testWebhookSettings } from '../../support/partner-app.ts';
import { testDatabase } from '../../support/shared-database.ts';

describe('OAuth sign-in throttle', () => {
  let clientId: string;
  before(async () => {
    clientId = (await registerTestClient(['profile:read'])).client_id;
  });

  /** An app behind a proxy it trusts, so each request can come from the address its X-Forwarded-For names. */
  async function appBehindProxy() {
    return createApp({
      db: testDatabase().db,
      logger: pino({ level: 'silent' }),
      limitStores: memoryLimitStores(),
      notifications: testNotifications(),
      tokens: await testTokenIssuer(),
      webhooks: testWebhookSettings(),
      config: { bodyLimitBytes: 100 * 1024, validateResponses: false, trustProxy: 1 },
    });
  }

  function signIn(app: Awaited<ReturnType<typeof appBehindProxy>>, from: string, email: string, password: string) {
    return supertest(app).post('/oauth/authorize').set('X-Forwarded-For', from).type('form').send({
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
    });
  }

  it('holds one account after 10 failures from 10 addresses, even for the right password; other accounts sign in', async () => {
    const app = await appBehindProxy();
    const began = performance.now();
    const [alice, bob] = await Promise.all([newStudentThroughOAuth(app), newStudentThroughOAuth(app)]);
    const first = await signIn(app, '198.51.100.1', alice.email, 'a wrong password').expect(401);
    // Each throttle names its window in the RateLimit headers, as express-rate-limit names one. A window may have
    // begun at the student's own sign-in above (seconds ago on a loaded machine), not before this test.
    const header = /^"20-in-15min"; r=19; t=(\d+), "10-in-15min"; r=9; t=(\d+)$/.exec(String(first.headers.ratelimit));
    assert.ok(header, `RateLimit: ${first.headers.ratelimit}`);
    const since = Math.ceil((performance.now() - began) / 1000);
    for (const t of [Number(header[1]), Number(header[2])])
      assert.ok(
        t <= 900 && t >= 900 - since - 1,
        `${first.headers.ratelimit}: reset within its 15 minutes, ${since} s in`,
      );
    assert.match(
      String(first.headers['ratelimit-policy']),
      /^"20-in-15min"; q=20; w=900; pk=:\w+=*:, "10-in-15min"; q=10; w=900; pk=:\w+=*:$/,
    );
    for (let i = 2; i <= 10; i++) await signIn(app, `198.51.100.${i}`, alice.email, 'a wrong password').expect(401);
    const held = await signIn(app, '203.0.113.7', alice.email.toUpperCase(), alice.password).expect(429);
    assert.match(held.text, /Too many sign-in attempts/);
    await signIn(app, '203.0.113.7', bob.email, bob.password).expect(303);
  });

  it('still holds one address after 20 failures over many accounts', async () => {
    const app = await appBehindProxy();
    const carol = await newStudentThroughOAuth(app);
    for (let i = 1; i <= 20; i++)
      await signIn(app, '198.51.100.99', `nobody-${i}@example.com`, 'a wrong password').expect(401);
    await signIn(app, '198.51.100.99', carol.email, carol.password).expect(429);
    await signIn(app, '198.51.100.100', carol.email, carol.password).expect(303);
  });
});
