// How the service tells a failing dependency (503, retry) from a bug (500), in process and on the real drivers:
// the database's failures as pg and PGlite raise them, the OAuth endpoints' own answer, the start-up checks, and the
// limit stores' fail-open and fail-closed policies with Redis taken away behind a proxy.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import supertest from 'supertest';
import { assertDatabaseReachable, connect, type Db } from '../../db/connect.ts';
import { isDatabaseUnavailable } from '../../db/errors.ts';
import { Problem } from '../../server/http/problems.ts';
import { redisLimitStores } from '../../server/limits/redis-limit-stores.ts';
import { buildApp } from '../support/partner-app.ts';
import { testDatabase } from '../support/shared-database.ts';
import { closedPort, startTcpProxy } from '../support/tcp-proxy.ts';

const failureOf = (query: Promise<unknown>) =>
  query.then(
    () => assert.fail('the query succeeded'),
    (error: unknown) => error,
  );

describe('dependency failures', () => {
  let downDb: Db;
  let downUrl: string;
  before(async () => {
    downUrl = `postgres://postgres@127.0.0.1:${await closedPort()}/nowhere`;
    downDb = connect({ databaseUrl: downUrl });
  });
  after(() => downDb.destroy());

  describe('isDatabaseUnavailable', () => {
    it('is true for a server that refuses connections', async () => {
      assert.equal(isDatabaseUnavailable(await failureOf(sql`select 1`.execute(downDb))), true);
    });

    it('is false for errors of ours: bad SQL, a missing relation, a division by zero', async () => {
      const { db } = testDatabase();
      assert.equal(isDatabaseUnavailable(await failureOf(sql`selec 1`.execute(db))), false);
      assert.equal(isDatabaseUnavailable(await failureOf(sql`select * from no_such_table`.execute(db))), false);
      assert.equal(isDatabaseUnavailable(await failureOf(sql`select 1 / 0`.execute(db))), false);
    });

    it('is true for a statement over the statement timeout, and for an exhausted pool', async function () {
      const url = testDatabase().url;
      if (!url) this.skip(); // pg only: PGlite has no pool and no statement_timeout
      const slow = connect({ databaseUrl: url! }, { timeouts: { connectMs: 5_000, statementMs: 200 } });
      const small = connect({ databaseUrl: url! }, { timeouts: { connectMs: 300, statementMs: 5_000 } });
      try {
        assert.equal(isDatabaseUnavailable(await failureOf(sql`select pg_sleep(2)`.execute(slow))), true);
        // Ten connections busy (the pool's size): the eleventh request waits for one no longer than connectMs.
        const busy = Array.from({ length: 10 }, () => sql`select pg_sleep(1)`.execute(small));
        const exhausted = await failureOf(sql`select 1`.execute(small));
        await Promise.all(busy);
        assert.equal(isDatabaseUnavailable(exhausted), true, String(exhausted));
      } finally {
        await Promise.all([slow.destroy(), small.destroy()]);
      }
    });
  });

  describe('a connection terminated while checked out', () => {
    it('is reported by SQLSTATE and message (no client, no settings) instead of ending the process', async function () {
      const url = testDatabase().url;
      if (!url) this.skip(); // pg only
      const reported: unknown[] = [];
      const db = connect({ databaseUrl: url! }, { onConnectionError: (error) => reported.push(error) });
      try {
        const outcome = await db
          .transaction()
          .execute(async (trx) => {
            const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
            await sql`select pg_terminate_backend(${rows[0]!.pid})`.execute(testDatabase().db);
            await new Promise((resolve) => setTimeout(resolve, 200)); // the client learns of it between two statements
            await sql`select 1`.execute(trx);
          })
          .then(
            () => 'committed',
            (error: unknown) => error,
          );
        assert.equal(isDatabaseUnavailable(outcome), true, String(outcome));
        assert.deepEqual(reported[0], {
          code: '57P01',
          message: 'terminating connection due to administrator command',
        });
        assert.equal(
          (await sql<{ one: number }>`select 1 as one`.execute(db)).rows[0]!.one,
          1,
          'the pool opened a new connection',
        );
      } finally {
        await db.destroy();
      }
    });
  });

  describe('the OAuth endpoints on a database that is down', () => {
    it('answer temporarily_unavailable with Retry-After in their own formats', async () => {
      const api = supertest(await buildApp({ db: downDb }));
      const token = await api
        .post('/oauth/token')
        .type('form')
        .send({ grant_type: 'client_credentials', client_id: 'c', client_secret: 's' })
        .expect(503);
      assert.equal(token.body.error, 'temporarily_unavailable');
      assert.match(String(token.headers['retry-after']), /^\d+$/);
      const revoke = await api.post('/oauth/revoke').type('form').send({ client_id: 'c', token: 't' }).expect(503);
      assert.equal(revoke.body.error, 'temporarily_unavailable');
      const page = await api
        .get('/oauth/authorize')
        .query({ client_id: 'c', redirect_uri: 'http://127.0.0.1/cb' })
        .expect(503);
      assert.match(String(page.headers['content-type']), /^text\/html/);
      assert.match(String(page.headers['retry-after']), /^\d+$/);
    });
  });

  describe('start-up checks', () => {
    it('assertDatabaseReachable throws one line naming the database and the reason', async () => {
      const error = await failureOf(assertDatabaseReachable(downDb, { databaseUrl: downUrl }));
      assert.match(
        (error as Error).message,
        /^cannot reach PostgreSQL at 127\.0\.0\.1:\d+\/nowhere: .*ECONNREFUSED[^\n]*$/,
      );
    });

    it('redisLimitStores throws one line naming Redis and the reason, at once', async () => {
      // At once: on the first refusal, not at the end of the start's bound (twice the timeout, which is long here so
      // that a third of it is a wide margin on a loaded machine).
      const timeoutMs = 30_000;
      const url = `redis://127.0.0.1:${await closedPort()}`;
      const started = performance.now();
      const error = await failureOf(redisLimitStores(url, { timeoutMs }));
      const tookMs = Math.round(performance.now() - started);
      assert.match((error as Error).message, /^cannot reach Redis at 127\.0\.0\.1:\d+: .*ECONNREFUSED[^\n]*$/);
      assert.ok(tookMs < (2 * timeoutMs) / 3, `refused after ${tookMs} ms`);
    });
  });

  describe('limit stores when Redis goes away', () => {
    /** Limit stores on the real Redis through a TCP proxy the test stops and starts; their warnings collected. */
    async function storesBehindProxy(redisUrl: string) {
      const redis = new URL(redisUrl);
      const proxy = await startTcpProxy({ host: redis.hostname, port: Number(redis.port || 6379) });
      const warnings: unknown[] = [];
      const stores = await redisLimitStores(proxy.urlFor(redisUrl), {
        keyPrefix: `rl:test:${randomBytes(4).toString('hex')}:`,
        timeoutMs: 300,
        logger: { warn: ((details: unknown) => void warnings.push(details)) as never },
      });
      return { proxy, stores, warnings };
    }

    it('fail open or closed as each limiter chose, for all its windows at once, warn once, count each failure, and count again once Redis is back', async function () {
      if (!process.env.REDIS_URL) this.skip(); // needs a real Redis: .ci/run sets REDIS_URL
      const { proxy, stores, warnings } = await storesBehindProxy(process.env.REDIS_URL!);
      const windows = [
        { name: 'minute', windowMs: 60_000 },
        { name: 'day', windowMs: 24 * 60 * 60_000 },
      ];
      const open = stores.counter('quota', windows, 'allow');
      const closed = stores.counter('throttle', windows, 'refuse');
      const hitsOf = async (counter: typeof open) =>
        (await counter.hit(['k', 'k'], [50, 50])).map((window) => window.totalHits);
      try {
        assert.deepEqual(await hitsOf(open), [1, 1]);

        await proxy.stop();
        let counted: Awaited<ReturnType<typeof open.hit>> = [];
        for (let i = 0; i < 3; i++) {
          counted = await open.hit(['k', 'k'], [50, 50]);
          assert.deepEqual(
            counted.map((window) => window.totalHits),
            [1, 1],
            'fresh windows, uncounted',
          );
          assert.ok(counted[1]!.resetTime - Date.now() > 60_000, 'each window as long as its own');
        }
        const refusal = await failureOf(closed.hit(['k', 'k'], [50, 50]));
        assert.ok(
          refusal instanceof Problem && refusal.status === 503 && refusal.code === 'service_unavailable',
          String(refusal),
        );
        // A give-back comes after the answer: it fails quietly, with no count of its own.
        await open.giveBack(['k', 'k'], counted);
        assert.deepEqual(Object.fromEntries(stores.failures.byScope), {
          'quota:minute': { allowed: 3, refused: 0 },
          'quota:day': { allowed: 3, refused: 0 },
          'throttle:minute': { allowed: 0, refused: 1 },
        });
        assert.equal(warnings.length, 2, 'one warning per limiter, not one per request');

        await proxy.start();
        const started = performance.now();
        let hits: number[] = [];
        while (performance.now() - started < 10_000 && hits[0] !== 2) {
          hits = await hitsOf(open).catch(() => []);
          if (hits[0] !== 2) await new Promise((resolve) => setTimeout(resolve, 100));
        }
        assert.deepEqual(hits, [2, 2], 'counting in Redis again, where it left off');
      } finally {
        await stores.close();
        await proxy.close();
      }
    });
  });
});
