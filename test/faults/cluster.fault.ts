// Several processes on one PostgreSQL and one Redis, as `npm start` runs them: two processes starting together
// migrate once; WEB_CONCURRENCY=2 serves from two workers, keeps serving when one is killed mid-load, verifies a
// token on processes that did not issue it, counts limits once across workers, and aggregates their metrics.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { request } from 'node:http';
import { sql } from 'kysely';
import { connect, type Db } from '../../db/connect.ts';
import { migrations } from '../../db/migrations/index.ts';
import { createThrowawayDatabase, type ThrowawayDatabase } from '../../db/throwaway-database.ts';
import { createAccount } from '../../server/auth/accounts.ts';
import { registerClient } from '../../server/oauth/clients.ts';
import { signIn, TEST_REDIRECT_URI } from '../support/oauth-flow.ts';
import { startServerProcess, type ServerProcess } from '../support/server-process.ts';

const databaseServer = process.env.DATABASE_URL;
const redisUrl = process.env.REDIS_URL;

/** One GET on a connection of its own, so that the cluster's round-robin spreads requests over its workers. */
function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    // A connection the primary handed to a worker as it died is never answered: give up on it, as a client would,
    // well after a loaded machine's slowest answer (the test waits this long once per kill that loses one).
    const req = request(url, { agent: false, headers, signal: AbortSignal.timeout(10_000) }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
      // A worker killed mid-response cuts the body short: node then ends the response with neither 'end' nor (with
      // no listener) 'error', only 'close' on an incomplete message.
      res.on('close', () => {
        if (!res.complete) reject(new Error('connection closed mid-response'));
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** Workers that logged "listening" (each worker logs it once it serves; pino names the pid). */
function listeningPids(primary: ServerProcess): number[] {
  return [...primary.output().matchAll(/^\{"level":30,"time":\d+,"pid":(\d+)[^\n]*"msg":"listening"\}$/gm)].map((m) =>
    Number(m[1]),
  );
}

/** The primary's node children: tsx's esbuild service is a child of it too, at times, and is no worker. */
function workerPids(primary: ServerProcess): number[] {
  try {
    return execFileSync('ps', ['-o', 'pid=,comm=', '--ppid', String(primary.child.pid)], { encoding: 'utf8' })
      .split('\n')
      .map((line) => line.trim().split(/\s+/))
      .filter(([pid, command]) => pid && command === 'node')
      .map(([pid]) => Number(pid));
  } catch {
    return []; // ps exits 1 when there are none
  }
}

async function until<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  context: () => string,
  timeoutMs = 90_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${context()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('several processes on PostgreSQL and Redis', function () {
  this.timeout(120_000);
  let throwaway: ThrowawayDatabase;
  let db: Db;
  const started: ServerProcess[] = [];
  const start = (env: Record<string, string | undefined>) => {
    const server = startServerProcess({
      DATABASE_URL: throwaway.url,
      REDIS_URL: redisUrl,
      PUBLIC_URL: 'http://localhost:3000',
      ...env,
    });
    started.push(server);
    return server;
  };

  before(async function () {
    if (!databaseServer || !redisUrl)
      throw new Error('fault tests need DATABASE_URL and REDIS_URL (see docs/contract-testing.md)');
    throwaway = await createThrowawayDatabase(databaseServer, 'sc_cluster');
    db = connect({ databaseUrl: throwaway.url });
  });
  afterEach(async () => {
    for (const server of started.splice(0)) {
      if (server.child.exitCode === null && server.child.signalCode === null) {
        server.child.kill('SIGKILL');
        await server.exited;
      }
    }
  });
  after(async () => {
    await db?.destroy();
    await throwaway?.drop();
  });

  it('migrates and seeds once when two processes start together, and their tokens verify on each other and after a restart', async () => {
    const [a, b] = [start({ LOG_LEVEL: 'info' }), start({ LOG_LEVEL: 'info' })];
    await Promise.all([a!.listening, b!.listening]);
    const migratedBy = [a!, b!].filter((p) => p.output().includes('"msg":"migrated"'));
    assert.equal(migratedBy.length, 1, 'exactly one process applied the migrations');
    const { count } = await db
      .selectFrom('kysely_migration' as never)
      .select(sql<number>`count(*)`.as('count'))
      .executeTakeFirstOrThrow();
    assert.equal(count, Object.keys(migrations).length);
    const universities = await db
      .selectFrom('universities')
      .select([sql<number>`count(*)`.as('rows'), sql<number>`count(distinct name)`.as('names')])
      .executeTakeFirstOrThrow();
    assert.ok(universities.rows > 0 && universities.rows === universities.names, 'reference data loaded once');

    // Both made or read the same signing keys in the database: a token issued by one verifies on the other, and
    // after both have stopped, on a process started later.
    const password = 'correct horse battery staple';
    const account = await createAccount(db, {
      email: 'restart@example.com',
      nickname: 'restart_student',
      first_name: 'R',
      password,
      time_zone: 'UTC',
      country_code: null,
    });
    const { client_id } = await registerClient(db, {
      name: 'restart test',
      redirect_uris: [TEST_REDIRECT_URI],
      scopes: ['profile:read'],
      confidential: false,
    });
    const { access_token } = await signIn(await a!.listening, {
      client_id,
      email: account.email,
      password,
      scope: 'profile:read',
    });
    const auth = { Authorization: `Bearer ${access_token}` };
    assert.equal((await get(`${await b!.listening}/api/users/me`, auth)).status, 200);
    a!.child.kill('SIGTERM');
    b!.child.kill('SIGTERM');
    assert.deepEqual(await Promise.all([a!.exited, b!.exited]), [0, 0]);
    const later = start({});
    assert.equal((await get(`${await later.listening}/api/users/me`, auth)).status, 200);
    later.child.kill('SIGTERM');
    assert.equal(await later.exited, 0);
  });

  it('WEB_CONCURRENCY=2: keeps serving when a worker dies, verifies tokens on other processes, shares limits, aggregates metrics', async function () {
    // Four worker starts in a row (two, then a replacement for each): on 2 shared cores each takes many seconds.
    this.timeout(300_000);
    const primary = start({ WEB_CONCURRENCY: '2', METRICS_PORT: '0', LOG_LEVEL: 'info' });
    const url = await primary.listening;
    const password = 'correct horse battery staple';
    const account = await createAccount(db, {
      email: 'cluster@example.com',
      nickname: 'cluster_student',
      first_name: 'C',
      password,
      time_zone: 'UTC',
      country_code: null,
    });
    const { client_id } = await registerClient(db, {
      name: 'cluster test',
      redirect_uris: [TEST_REDIRECT_URI],
      scopes: ['profile:read'],
      confidential: false,
    });
    const seen = () => `workers ${workerPids(primary).join(', ')}\n${primary.output()}`;
    const serving = (pids: number[]) => pids.every((pid) => listeningPids(primary).includes(pid));
    const original = await until(
      'two workers',
      () => {
        const pids = workerPids(primary);
        return pids.length === 2 && serving(pids) ? pids : undefined;
      },
      seen,
    );
    const { access_token } = await signIn(url, { client_id, email: account.email, password, scope: 'profile:read' });
    const auth = { Authorization: `Bearer ${access_token}` };

    // Load from four clients; one worker is killed in the middle of it. Counted in requests, not in time: the kill
    // comes after a first round, and the load ends once enough requests were sent after the primary had seen the
    // worker go (it logs the death after it stopped handing the worker connections).
    const deathSeen = () => /"msg":"a worker died; starting another"/.test(primary.output());
    const outcomes: Array<{ afterDeathSeen: boolean; ok: boolean }> = [];
    const AFTER_DEATH = 24;
    let killed = false;
    const client = async () => {
      while (outcomes.filter((o) => o.afterDeathSeen).length < AFTER_DEATH) {
        if (!killed && outcomes.length >= 8) {
          killed = true;
          process.kill(original[0]!, 'SIGKILL');
        }
        const afterDeathSeen = killed && deathSeen();
        const ok = await get(`${url}/docs/openapi.json`).then(
          (r) => r.status === 200,
          () => false,
        );
        outcomes.push({ afterDeathSeen, ok });
      }
    };
    await Promise.all([client(), client(), client(), client()]);
    // Requests sent once the primary has seen the worker go (it stops handing it connections) are all served.
    const after = outcomes.filter((o) => o.afterDeathSeen);
    const failed = outcomes.filter((o) => !o.ok).length;
    console.log(`      ${outcomes.length - after.length} requests before the primary saw the death (${failed} failed)`);
    assert.ok(
      after.every((o) => o.ok),
      `requests after the primary saw the death: ${after.filter((o) => o.ok).length} of ${after.length} served`,
    );
    // The four clients' requests in flight on the killed worker, and the one connection the primary may have handed it
    // as it died (node:cluster hands a worker its next connection only once it took the last).
    assert.ok(failed <= 5, 'at most the requests in flight on the killed worker failed, and one handed to it');

    // The dead worker is replaced; then the other original one is killed too: only processes that did not issue the
    // token are left, and they verify it.
    await until(
      'a replacement worker',
      () => {
        const fresh = workerPids(primary).filter((pid) => !original.includes(pid));
        return fresh.length === 1 && serving(fresh) ? true : undefined;
      },
      seen,
    );
    process.kill(original[1]!, 'SIGKILL');
    const replacements = await until(
      'two replacement workers',
      () => {
        const pids = workerPids(primary);
        return pids.length === 2 && pids.every((pid) => !original.includes(pid)) && serving(pids) ? pids : undefined;
      },
      seen,
    );
    assert.equal(replacements.length, 2);
    for (let i = 0; i < 4; i++) assert.equal((await get(`${url}/api/users/me`, auth)).status, 200);

    // Limits are counted once across workers (Redis): the free plan allows 60 a minute, 4 are spent above; spread
    // over both workers, the 57th of these is refused (with counters per process, each would allow 60).
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) statuses.push((await get(`${url}/api/users/me`, auth)).status);
    assert.deepEqual(statuses, [...Array(56).fill(200), ...Array(4).fill(429)]);

    // The primary serves the workers' metrics, aggregated (the replacements served all of the requests above).
    const metricsUrl = /metrics \(Prometheus\): (\S+)/.exec(primary.output())?.[1];
    assert.ok(metricsUrl, primary.output());
    const scraped = await get(metricsUrl);
    assert.equal(scraped.status, 200);
    const value = (series: string) => {
      const line = scraped.body.split('\n').find((l) => l.startsWith(series + ' '));
      assert.ok(line, `no series ${series} in:\n${scraped.body}`);
      return Number(line.slice(series.length + 1));
    };
    assert.equal(value('http_requests_total{operation="getMyProfile",status="200"}'), 60);
    assert.equal(value('http_requests_total{operation="getMyProfile",status="429"}'), 4);
    assert.equal(value('http_request_duration_seconds_count{operation="getMyProfile",status="200"}'), 60);
    assert.equal(value('rate_limit_refusals_total{limiter="general:minute"}'), 4);
    assert.ok(value('db_pool_connections') >= 2, 'each worker holds pooled connections');
    assert.ok(value('db_pool_acquire_seconds_count') > 0);
    for (const series of [
      'db_pool_waiting',
      'db_pool_connections_idle',
      'sse_streams_open',
      'nodejs_eventloop_lag_seconds',
    ])
      value(series);
    assert.doesNotMatch(scraped.body, /operation="\/api\/users\/me"/, 'operationIds, not raw paths, as label values');

    // SIGTERM to the primary stops the workers, then the primary.
    primary.child.kill('SIGTERM');
    assert.equal(await primary.exited, 0);
    assert.deepEqual(workerPids(primary), []);
  });
});
