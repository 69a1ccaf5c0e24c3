// The limiter's window mechanics, on express-rate-limit's real stores, with windows short enough to watch one
// reset (the partner windows are a minute and a day; the mechanism is the same).
import assert from 'node:assert/strict';
import express from 'express';
import supertest from 'supertest';
import { Problem } from '../../server/problems.ts';
import { createLimiter, memoryLimitStores } from '../../server/rate-limits.ts';

type Caller = { id: string; short: number; long: number };

function appWith(caller: Caller) {
  const limit = createLimiter<Caller>(
    'unit',
    [
      { name: 'short', windowMs: 1000, limitOf: (c) => c.short, keyOf: (c) => c.id },
      { name: 'long', windowMs: 60_000, limitOf: (c) => c.long, keyOf: (c) => c.id },
    ],
    memoryLimitStores(),
    { onStoreFailure: 'allow' },
  );
  const app = express();
  app.get('/', (req, res, next) => limit(req, res, caller).then(() => res.json({ ok: true }), next));
  app.use((error: Problem, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    res.status(error.status).json({ code: error.code, detail: error.detail });
  });
  return supertest(app);
}

describe('createLimiter', () => {
  it('does not count a request refused by an earlier window against the later ones', async () => {
    const api = appWith({ id: 'a', short: 2, long: 10 });
    await api.get('/').expect(200);
    await api.get('/').expect(200);
    const refused = await api.get('/').expect(429);
    assert.equal(refused.body.code, 'rate_limited');
    assert.match(refused.body.detail, /per-short limit/);
    await api.get('/').expect(429);
    await new Promise((resolve) => setTimeout(resolve, 1100)); // let the short window reset
    const next = await api.get('/').expect(200);
    // 3 counted of 10: the two refused requests were not.
    assert.match(String(next.headers['ratelimit']), /"long"; r=7;/);
  });

  it('reports each window in the RateLimit and RateLimit-Policy headers', async () => {
    const res = await appWith({ id: 'b', short: 5, long: 50 }).get('/').expect(200);
    assert.match(String(res.headers['ratelimit']), /^"short"; r=4; t=\d+, "long"; r=49; t=\d+$/);
    assert.match(String(res.headers['ratelimit-policy']), /^"short"; q=5; w=1; pk=:[^:]+:, "long"; q=50; w=60; pk=:[^:]+:$/);
  });
});
