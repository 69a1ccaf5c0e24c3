// GET /livez and GET /readyz: no credentials, 200 or 503 with every check named; readiness fails while the process
// drains for a stop, when the database cannot be reached (it refuses, or it says nothing and the probe's own bound
// answers), and (on PostgreSQL) when its migrations are behind.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import supertest from 'supertest';
import { connect } from '../../db/connect.ts';
import { createThrowawayDatabase } from '../../db/throwaway-database.ts';
import { createLifecycle } from '../../server/process/lifecycle.ts';
import { createLogger } from '../../server/process/logger.ts';
import { memoryLimitStores } from '../../server/limits/rate-limits.ts';
import { redisLimitStores } from '../../server/limits/redis-limit-stores.ts';
import { buildApp } from '../support/partner-app.ts';

/** A PostgreSQL address where nothing listens: connections are refused at once. */
const CLOSED_PORT_URL = 'postgres://postgres@127.0.0.1:1/nothing';

describe('probes (/livez, /readyz)', function () {
  this.timeout(30_000);

  it('answers both without credentials: alive, and ready with each check named', async () => {
    const app = supertest(await buildApp());
    const live = await app.get('/livez').expect(200);
    assert.deepEqual(live.body, { status: 'ok' });
    assert.equal(live.headers['cache-control'], 'no-store');
    await app.get('/LIVEZ/').expect(200); // routed as Express routes: any case, a trailing slash
    const ready = await app.get('/readyz').expect(200);
    assert.deepEqual(ready.body, {
      status: 'ready',
      checks: { accepting: 'ok', database: 'ok', migrations: 'ok', redis: 'not_configured' },
    });
  });

  it('is not ready while the process drains for a stop, though still alive', async () => {
    const lifecycle = createLifecycle();
    const app = supertest(await buildApp({ lifecycle }));
    lifecycle.beginDrain();
    const ready = await app.get('/readyz').expect(503);
    assert.equal(ready.body.status, 'not_ready');
    assert.equal(ready.body.checks.accepting, 'draining');
    assert.equal(ready.body.checks.database, 'ok');
    await app.get('/livez').expect(200);
  });

  it('is not ready when the database refuses connections', async () => {
    const db = connect({ databaseUrl: CLOSED_PORT_URL });
    try {
      const ready = await supertest(await buildApp({ db }))
        .get('/readyz')
        .expect(503);
      assert.deepEqual(ready.body.checks, {
        accepting: 'ok',
        database: 'unreachable',
        migrations: 'unknown',
        redis: 'not_configured',
      });
    } finally {
      await db.destroy();
    }
  });

  it('is not ready when the database accepts and never answers, by its own bound, not the connection timeout', async () => {
    // The probe bounds its check by itself (half a second, below the 1 s Kubernetes gives a probe), so it answers
    // long before the pool's connection timeout would: the bound here is a third of that timeout.
    const held: Socket[] = [];
    const mute = createServer((socket) => void held.push(socket));
    const asked = once(mute, 'connection');
    await new Promise<void>((resolve) => mute.listen(0, '127.0.0.1', resolve));
    const { port } = mute.address() as AddressInfo;
    const connectMs = 60_000;
    const db = connect(
      { databaseUrl: `postgres://postgres@127.0.0.1:${port}/mute` },
      { timeouts: { connectMs, statementMs: connectMs } },
    );
    try {
      const app = supertest(await buildApp({ db }));
      const startedAt = performance.now();
      const ready = await app.get('/readyz').expect(503);
      const tookMs = performance.now() - startedAt;
      assert.ok(tookMs < connectMs / 3, `answered after ${Math.round(tookMs)} ms`);
      await asked; // the check did reach the database, which said nothing
      assert.deepEqual(ready.body.checks, {
        accepting: 'ok',
        database: 'unreachable',
        migrations: 'unknown',
        redis: 'not_configured',
      });
    } finally {
      // The pool's connection attempt ends with its socket, so that the pool can close.
      for (const socket of held) socket.destroy();
      await new Promise((resolve) => mute.close(resolve));
      await db.destroy();
    }
  });

  it('is never logged at info level, unlike an API request', async () => {
    const lines: Array<{ level: number; req?: { url: string } }> = [];
    const logger = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) });
    const app = supertest(await buildApp({ logger }));
    await app.get('/livez').expect(200);
    await app.get('/readyz').expect(200);
    await app.get('/api/v1/health').expect(401);
    assert.deepEqual(
      lines.map((line) => line.req?.url),
      ['/api/v1/health'],
    );
  });

  it('is not ready when Redis is configured and cannot be reached', async function () {
    const redisUrl = process.env.REDIS_URL;
    if (!redisUrl) this.skip();
    const limitStores = await redisLimitStores(redisUrl!, { keyPrefix: `probes-test-${process.pid}:` });
    const app = supertest(await buildApp({ limitStores }));
    assert.equal((await app.get('/readyz').expect(200)).body.checks.redis, 'ok');
    await limitStores.close();
    assert.equal((await app.get('/readyz').expect(503)).body.checks.redis, 'unreachable');
  });

  it('is not ready when the database has not run every migration', async function () {
    const serverUrl = process.env.DATABASE_URL;
    if (!serverUrl) this.skip();
    const throwaway = await createThrowawayDatabase(serverUrl!, 'probes_test');
    const db = connect({ databaseUrl: throwaway.url });
    try {
      await db.schema
        .createTable('kysely_migration')
        .addColumn('name', 'varchar(255)', (c) => c.primaryKey())
        .execute();
      await db
        .insertInto('kysely_migration' as never)
        .values({ name: '20261122_0001_partner_v1' } as never)
        .execute();
      const app = supertest(await buildApp({ db, limitStores: memoryLimitStores() }));
      assert.deepEqual((await app.get('/readyz').expect(503)).body.checks, {
        accepting: 'ok',
        database: 'ok',
        migrations: 'pending',
        redis: 'not_configured',
      });
    } finally {
      await db.destroy();
      await throwaway.drop();
    }
  });
});
