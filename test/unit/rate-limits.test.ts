// The limiter's window mechanics, on its real counters (in memory, and in Redis when REDIS_URL is set), with windows
// short enough to watch one reset (the partner windows are a minute and a day; the mechanism is the same).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import express from 'express';
import supertest from 'supertest';
import { Problem } from '../../server/http/problems.ts';
import { createLimiter, memoryLimitStores, type GiveBack, type LimitStores } from '../../server/limits/rate-limits.ts';
import { redisLimitStores } from '../../server/limits/redis-limit-stores.ts';

type Caller = { id: string; short: number; long: number };

/** `kept`: where GET /kept leaves the give-back of each request it counts. */
function appWith(stores: LimitStores, caller: Caller, kept: GiveBack[] = []) {
  const limit = createLimiter<Caller>(
    'unit',
    [
      { name: 'short', windowMs: 1000, limitOf: (c) => c.short, keyOf: (c) => c.id },
      { name: 'long', windowMs: 60_000, limitOf: (c) => c.long, keyOf: (c) => c.id },
    ],
    stores,
    { onStoreFailure: 'allow' },
  );
  const app = express();
  app.get('/', (req, res, next) => limit(req, res, caller).then(() => res.json({ ok: true }), next));
  app.get('/kept', (req, res, next) =>
    limit(req, res, caller).then((giveBack) => res.json({ ok: kept.push(giveBack) }), next),
  );
  app.use((error: Problem, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    res.status(error.status).json({ code: error.code, detail: error.detail });
  });
  return supertest(app);
}

for (const kind of ['memory', 'Redis'] as const) {
  describe(`createLimiter, counting in ${kind}`, function () {
    let stores: LimitStores;
    before(async function () {
      if (kind === 'memory') return void (stores = memoryLimitStores());
      if (!process.env.REDIS_URL) this.skip(); // needs a real Redis: .ci/run sets REDIS_URL
      stores = await redisLimitStores(process.env.REDIS_URL!, {
        keyPrefix: `rl:test:${randomBytes(4).toString('hex')}:`,
      });
    });
    after(() => stores?.close());

    it('does not count a request refused by an earlier window against the later ones', async () => {
      const api = appWith(stores, { id: 'a', short: 2, long: 10 });
      await api.get('/').expect(200);
      await api.get('/').expect(200);
      const refused = await api.get('/').expect(429);
      assert.equal(refused.body.code, 'rate_limited');
      assert.match(refused.body.detail, /per-short limit/);
      assert.match(String(refused.headers['retry-after']), /^[01]$/);
      assert.match(
        String(refused.headers['ratelimit']),
        /^"short"; r=0; t=[01]$/,
        'the windows after the refusing one are not reported',
      );
      await api.get('/').expect(429);
      await new Promise((resolve) => setTimeout(resolve, 1100)); // let the short window reset
      const next = await api.get('/').expect(200);
      // 3 counted of 10: the two refused requests were not.
      assert.match(String(next.headers['ratelimit']), /"long"; r=7;/);
    });

    it('refuses in a later window once an earlier one lets the request through, and names it', async () => {
      const api = appWith(stores, { id: 'c', short: 5, long: 2 });
      await api.get('/').expect(200);
      await api.get('/').expect(200);
      const refused = await api.get('/').expect(429);
      assert.match(
        refused.body.detail,
        /per-long limit of this key \(2 requests\) is exhausted; retry in (59|60) seconds/,
      );
      assert.match(String(refused.headers['retry-after']), /^(59|60)$/);
      assert.match(String(refused.headers['ratelimit']), /^"short"; r=2; t=[01], "long"; r=0; t=(59|60)$/);
    });

    it('gives a request back in the windows it was counted in, but not in one that has ended since', async () => {
      const kept: GiveBack[] = [];
      const api = appWith(stores, { id: 'd', short: 5, long: 50 }, kept);
      await api.get('/kept').expect(200);
      await api.get('/kept').expect(200);
      await kept.shift()!();
      assert.match(
        String((await api.get('/').expect(200)).headers['ratelimit']),
        /^"short"; r=3; t=[01], "long"; r=48;/,
      );
      await new Promise((resolve) => setTimeout(resolve, 1100)); // the short window of the second request ends
      assert.match(
        String((await api.get('/').expect(200)).headers['ratelimit']),
        /^"short"; r=4; t=[01], "long"; r=47;/,
      );
      await kept.shift()!();
      // Given back in the long window only: the short one now counts the requests of another window.
      assert.match(
        String((await api.get('/').expect(200)).headers['ratelimit']),
        /^"short"; r=3; t=[01], "long"; r=47;/,
      );
    });

    it('reports each window in the RateLimit and RateLimit-Policy headers', async () => {
      const res = await appWith(stores, { id: 'b', short: 5, long: 50 }).get('/').expect(200);
      assert.match(String(res.headers['ratelimit']), /^"short"; r=4; t=[01], "long"; r=49; t=(59|60)$/);
      // pk: express-rate-limit's partition key of the key "b" (base64 of the first 12 hex digits of its SHA-256).
      assert.equal(
        res.headers['ratelimit-policy'],
        '"short"; q=5; w=1; pk=:M2UyM2U4MTYwMDM5:, "long"; q=50; w=60; pk=:M2UyM2U4MTYwMDM5:',
      );
    });

    describe('takeMore: a request that stands for several', () => {
      const limiterOf = (scope: string) =>
        createLimiter<Caller>(
          scope,
          [
            { name: 'short', windowMs: 60_000, limitOf: (c) => c.short, keyOf: (c) => c.id },
            { name: 'long', windowMs: 120_000, limitOf: (c) => c.long, keyOf: (c) => c.id },
          ],
          stores,
          { onStoreFailure: 'allow', subject: 'this caller' },
        );

      it('takes as many as every window has room for, never past a limit, the same number in each', async () => {
        const limiter = limiterOf(`more-${randomBytes(3).toString('hex')}`);
        const caller = { id: 'm', short: 10, long: 8 };
        const first = await limiter.takeMore(caller, 5);
        assert.equal(first.taken, 5);
        assert.equal(first.refusal, undefined);
        assert.match(first.headers['RateLimit']!, /^"short"; r=5; t=(59|60), "long"; r=3; t=(119|120)$/);
        assert.equal(first.headers['Retry-After'], undefined);
        // The long window has 3 left: 3 of 5 are taken, the short window counts 3 too, and the long one is named.
        const second = await limiter.takeMore(caller, 5);
        assert.equal(second.taken, 3);
        assert.equal(second.refusal?.code, 'rate_limited');
        assert.match(second.refusal!.detail, /per-long limit of this caller \(8 requests\)/);
        assert.match(second.headers['Retry-After']!, /^(119|120)$/);
        assert.match(second.headers['RateLimit']!, /^"short"; r=2; t=(59|60), "long"; r=0; t=(119|120)$/);
        const none = await limiter.takeMore(caller, 2);
        assert.equal(none.taken, 0);
        assert.ok(none.refusal);
        // Nothing was counted past the limits: a request is refused by the long window, not over it by more.
        const app = express().get('/', (req, res, next) => limiter(req, res, caller).then(() => res.end(), next));
        app.use((error: Problem, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
          res.status(error.status).end();
        });
        const res = await supertest(app).get('/').expect(429);
        assert.match(String(res.headers['ratelimit']), /"short"; r=1;.*"long"; r=0;/);
      });

      it('shares the last places between takes at once without giving one twice', async () => {
        const limiter = limiterOf(`race-${randomBytes(3).toString('hex')}`);
        const caller = { id: 'r', short: 25, long: 1000 };
        const takes = await Promise.all(Array.from({ length: 8 }, () => limiter.takeMore(caller, 7)));
        assert.equal(
          takes.reduce((sum, take) => sum + take.taken, 0),
          25,
        );
        assert.equal(takes.filter((take) => take.refusal).length, takes.filter((take) => take.taken < 7).length);
      });
    });
  });
}
