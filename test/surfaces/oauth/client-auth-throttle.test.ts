// Failed client authentication at /oauth/token (issue 23, item 9): 350 wrong client secrets were all answered 401.
// Failures now count per client_id and per client address (server/oauth/client-auth-limit.ts); past either bound the
// token endpoint answers 429 with RFC 6749's error object and Retry-After, even for the right secret.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import supertest from 'supertest';
import { createApp } from '../../../app/app.ts';
import {
  CLIENT_AUTH_FAILURES_PER_ADDRESS,
  CLIENT_AUTH_FAILURES_PER_CLIENT,
} from '../../../server/oauth/client-auth-limit.ts';
import { memoryLimitStores, type LimitStores } from '../../../server/limits/rate-limits.ts';
import { redisLimitStores } from '../../../server/limits/redis-limit-stores.ts';
import { newStudentThroughOAuth } from '../../support/general-app.ts';
import { registerTestClient } from '../../support/oauth-flow.ts';
import { testNotifications, testTokenIssuer, testWebhookSettings } from '../../support/partner-app.ts';
import { testDatabase } from '../../support/shared-database.ts';

type App = Awaited<ReturnType<typeof createApp>>;

/** An app behind a proxy it trusts, so each request can come from the address its X-Forwarded-For names. */
async function appBehindProxy(limitStores: LimitStores = memoryLimitStores()) {
  return createApp({
    db: testDatabase().db,
    logger: pino({ level: 'silent' }),
    limitStores,
    notifications: testNotifications(),
    tokens: await testTokenIssuer(),
    webhooks: testWebhookSettings(),
    config: { bodyLimitBytes: 100 * 1024, validateResponses: false, trustProxy: 1 },
  });
}

async function confidentialClient(app: App) {
  const owner = await newStudentThroughOAuth(app);
  const client = await registerTestClient(['profile:read'], { confidential: true, owner_user_id: owner.id });
  return { id: client.client_id, secret: client.client_secret! };
}

const clientCredentials = (app: App, from: string, clientId: string, secret: string) =>
  supertest(app)
    .post('/oauth/token')
    .set('X-Forwarded-For', from)
    .auth(clientId, secret)
    .type('form')
    .send({ grant_type: 'client_credentials' });

function assertThrottled(res: { status: number; body: { error?: string }; headers: Record<string, string> }) {
  assert.equal(res.status, 429);
  assert.equal(res.body.error, 'slow_down');
  assert.ok(Number(res.headers['retry-after']) > 0, `Retry-After: ${res.headers['retry-after']}`);
  assert.equal(res.headers['cache-control'], 'no-store');
}

describe('/oauth/token client authentication throttle', () => {
  it(`holds a client after ${CLIENT_AUTH_FAILURES_PER_CLIENT} wrong secrets from many addresses, even for the right secret; other clients get tokens`, async function () {
    this.timeout(120_000);
    const app = await appBehindProxy();
    const [target, other] = [await confidentialClient(app), await confidentialClient(app)];
    const statuses = new Set<number>();
    for (let i = 0; i < CLIENT_AUTH_FAILURES_PER_CLIENT; i++) {
      statuses.add(
        (await clientCredentials(app, `198.51.${Math.floor(i / 10)}.${i % 10}`, target.id, `secret_wrong_${i}`)).status,
      );
    }
    assert.deepEqual([...statuses], [401]);
    assertThrottled(await clientCredentials(app, '203.0.113.7', target.id, target.secret));
    await clientCredentials(app, '203.0.113.7', other.id, other.secret).expect(200);
  });

  it(`holds an address after ${CLIENT_AUTH_FAILURES_PER_ADDRESS} wrong secrets over several clients; other addresses get tokens`, async () => {
    const app = await appBehindProxy();
    const clients = [await confidentialClient(app), await confidentialClient(app)];
    for (let i = 0; i < CLIENT_AUTH_FAILURES_PER_ADDRESS; i++)
      await clientCredentials(app, '198.51.100.1', clients[i % 2]!.id, 'secret_wrong').expect(401);
    assertThrottled(await clientCredentials(app, '198.51.100.1', clients[0]!.id, clients[0]!.secret));
    await clientCredentials(app, '198.51.100.2', clients[0]!.id, clients[0]!.secret).expect(200);
  });

  it('counts only failed client authentication: good requests and other errors (a bad refresh token) do not count', async () => {
    const app = await appBehindProxy();
    const client = await confidentialClient(app);
    for (let i = 0; i <= CLIENT_AUTH_FAILURES_PER_ADDRESS; i++) {
      await clientCredentials(app, '198.51.100.3', client.id, client.secret).expect(200);
      const refresh = await supertest(app)
        .post('/oauth/token')
        .set('X-Forwarded-For', '198.51.100.3')
        .auth(client.id, client.secret)
        .type('form')
        .send({ grant_type: 'refresh_token', refresh_token: 'not-a-token' });
      assert.equal(refresh.status, 400);
    }
  });

  it('shares the counts between processes through Redis', async function () {
    const url = process.env.REDIS_URL;
    if (!url) this.skip(); // needs a real Redis: .ci/run sets REDIS_URL
    const keyPrefix = `rl:test:${randomBytes(4).toString('hex')}:`;
    const stores = [await redisLimitStores(url!, { keyPrefix }), await redisLimitStores(url!, { keyPrefix })];
    try {
      const apps = [await appBehindProxy(stores[0]), await appBehindProxy(stores[1])];
      const client = await confidentialClient(apps[0]!);
      for (let i = 0; i < CLIENT_AUTH_FAILURES_PER_ADDRESS; i++)
        await clientCredentials(apps[i % 2]!, '198.51.100.4', client.id, 'secret_wrong').expect(401);
      for (const app of apps) assertThrottled(await clientCredentials(app, '198.51.100.4', client.id, client.secret));
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
  });
});
