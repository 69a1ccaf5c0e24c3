// Per-key limits: both windows, their headers, and counts shared through Redis by several instances.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { memoryLimitStores, type LimitStores } from '../../../server/limits/rate-limits.ts';
import { redisLimitStores } from '../../../server/limits/redis-limit-stores.ts';
import { contractClient } from '../../support/contract.ts';
import { buildApp, issueTestKey, partnerApp } from '../../support/partner-app.ts';

describe('partner rate limits', () => {
  it('refuses the request after the per-minute limit with 429, Retry-After and RateLimit headers', async () => {
    const { api, key } = await partnerApp({ keyLimits: { per_minute: 3 } });
    for (let i = 0; i < 3; i++) await api.get('/api/v1/health').set('X-Service-API-Key', key).expect(200);
    const res = await api.get('/api/v1/universities').set('X-Service-API-Key', key).expect(429);
    assert.equal(res.body.code, 'rate_limited');
    assert.match(res.body.detail, /per-minute limit of this key \(3 requests\)/);
    const retryAfter = Number(res.headers['retry-after']);
    assert.ok(Number.isInteger(retryAfter) && retryAfter > 0 && retryAfter <= 60, `Retry-After ${retryAfter}`);
    assert.match(String(res.headers['ratelimit']), /"minute"; r=0; t=\d+/);
  });

  it('refuses after the per-day limit and names that window', async () => {
    const { api, key } = await partnerApp({ keyLimits: { per_minute: 50, per_day: 2 } });
    await api.get('/api/v1/stats').set('X-Service-API-Key', key).expect(200);
    await api.get('/api/v1/stats').set('X-Service-API-Key', key).expect(200);
    const res = await api.get('/api/v1/stats').set('X-Service-API-Key', key).expect(429);
    assert.match(res.body.detail, /per-day limit/);
    assert.ok(Number(res.headers['retry-after']) > 60, 'the day window resets in hours, not seconds');
  });

  it('counts invalid requests too, and each key separately', async () => {
    const app = await buildApp();
    const api = contractClient(app);
    const busy = await issueTestKey({ per_minute: 2 });
    const other = await issueTestKey({ per_minute: 2 });
    await api.get('/api/v1/universities?limit=0').set('X-Service-API-Key', busy.key).expect(400);
    await api.get('/api/v1/universities?limit=0').set('X-Service-API-Key', busy.key).expect(400);
    await api.get('/api/v1/universities').set('X-Service-API-Key', busy.key).expect(429);
    await api.get('/api/v1/universities').set('X-Service-API-Key', other.key).expect(200);
  });

  describe('with several instances', function () {
    /** Sends five requests alternately to two app instances and returns the statuses. */
    async function alternate(storesA: LimitStores, storesB: LimitStores): Promise<number[]> {
      const { key } = await issueTestKey({ per_minute: 4 });
      const apis = [
        contractClient(await buildApp({ limitStores: storesA })),
        contractClient(await buildApp({ limitStores: storesB })),
      ];
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++)
        statuses.push((await apis[i % 2]!.get('/api/v1/health').set('X-Service-API-Key', key)).status);
      return statuses;
    }

    it('shares counts through Redis, so the limit holds across instances', async function () {
      const url = process.env.REDIS_URL;
      if (!url) this.skip(); // needs a real Redis: .ci/run sets REDIS_URL
      const prefix = `rl:test:${randomBytes(4).toString('hex')}:`;
      const [a, b] = [
        await redisLimitStores(url!, { keyPrefix: prefix }),
        await redisLimitStores(url!, { keyPrefix: prefix }),
      ];
      try {
        assert.deepEqual(await alternate(a, b), [200, 200, 200, 200, 429]);
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    });

    it('counts per process without Redis (the reason to set REDIS_URL behind a load balancer)', async () => {
      assert.deepEqual(await alternate(memoryLimitStores(), memoryLimitStores()), [200, 200, 200, 200, 200]);
    });
  });
});
