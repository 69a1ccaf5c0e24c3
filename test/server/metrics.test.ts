// GET /metrics on its own port: the series a dashboard needs, labelled by operationId (never a raw path).
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { sql } from 'kysely';
import { connect } from '../../db/connect.ts';
import { metricsRegistry, observePool } from '../../server/process/metrics.ts';
import { testDatabase } from '../support/shared-database.ts';
import { metricsUrl, serveMetrics } from '../../app/metrics-server.ts';
import { partnerApp } from '../support/partner-app.ts';

describe('metrics (METRICS_PORT)', () => {
  let server: Server;
  let url: string;
  before(async () => {
    server = await serveMetrics(
      { port: 0, host: '127.0.0.1' },
      () => metricsRegistry.metrics(),
      metricsRegistry.contentType,
    );
    url = metricsUrl(server);
  });
  after(() => server.close());

  const scrape = async () => {
    const res = await fetch(url);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type')!, /^text\/plain; version=0\.0\.4/);
    return res.text();
  };
  const value = (text: string, series: string) => {
    const line = text.split('\n').find((l) => l.startsWith(series + ' '));
    return line ? Number(line.slice(series.length + 1)) : 0;
  };

  it('counts requests and latency per operationId and status, and rate-limit refusals per limiter', async () => {
    const { api, key } = await partnerApp({ keyLimits: { per_minute: 1 } });
    const before = await scrape();
    await api.get('/api/v1/health').set('x-service-api-key', key).expect(200);
    await api.get('/api/v1/health').set('x-service-api-key', key).expect(429);
    await api.get('/api/v1/universities/not-a-uuid/nothing').set('x-service-api-key', key).expect(404);
    const after = await scrape();
    const delta = (series: string) => value(after, series) - value(before, series);
    assert.equal(delta('http_requests_total{operation="getHealth",status="200"}'), 1);
    assert.equal(delta('http_requests_total{operation="getHealth",status="429"}'), 1);
    assert.equal(delta('http_request_duration_seconds_count{operation="getHealth",status="200"}'), 1);
    assert.equal(delta('http_requests_total{operation="unmatched",status="404"}'), 1);
    assert.equal(delta('rate_limit_refusals_total{limiter="partner-v1:minute"}'), 1);
    assert.match(after, /^# TYPE http_request_duration_seconds histogram$/m);
    assert.match(after, /^sse_streams_open \d+$/m);
    // Label values are operationIds, Express route patterns (/oauth/token, /docs/openapi.json) or "unmatched": the
    // request for a path no operation has is not recorded under its path.
    assert.doesNotMatch(after, /operation="[^"]*not-a-uuid/, 'raw paths are never label values');
  });

  it('answers only GET /metrics', async () => {
    assert.equal((await fetch(url.replace(/\/metrics$/, '/'))).status, 404);
    assert.equal((await fetch(url, { method: 'POST' })).status, 404);
  });

  it("times the pool's check-outs, and leaves pg-pool's own query (a check-out with a callback) working", async function () {
    const { url: databaseUrl } = testDatabase();
    if (!databaseUrl) this.skip(); // the embedded database has no pool
    let pool!: import('pg').Pool;
    const db = connect({ databaseUrl }, { observePool: (observed) => (observePool(observed), (pool = observed)) });
    try {
      const before = await scrape();
      await sql`select 1`.execute(db);
      const after = await scrape();
      assert.equal(value(after, 'db_pool_acquire_seconds_count') - value(before, 'db_pool_acquire_seconds_count'), 1);
      const { rows } = await pool.query('select 2 as two');
      assert.deepEqual(rows, [{ two: 2 }]);
      assert.equal(pool.idleCount, pool.totalCount, 'its connection is back in the pool');
    } finally {
      await db.destroy();
    }
  });
});
