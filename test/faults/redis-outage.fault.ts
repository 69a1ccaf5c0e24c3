// Redis killed and restored behind a TCP proxy this test owns (the machine's Redis is never touched). While it is
// gone, no request hangs: the quota limiters fail open (answered, uncounted) and the throttles fail closed (503 —
// the sign-in form and account creation); once it is back, the counters are shared again within 10 s.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { DEFAULT_REDIS_TIMEOUT_MS } from '../../server/limits/redis-defaults.ts';
import { startServerProcess, type ServerProcess } from '../support/server-process.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';
import {
  assertServiceUnavailable,
  call,
  faultDatabase,
  requiredEnv,
  until,
  type FaultDatabase,
} from './support/fixture.ts';

/**
 * Every request during the outage must be answered within this: it waits for Redis at most the Redis deadline a call
 * (1 s), a few calls a request; ten times that deadline still tells an answer from a hang on a loaded machine.
 */
const ANSWER_WITHIN_MS = 10 * DEFAULT_REDIS_TIMEOUT_MS;

describe('Redis killed and restored behind a proxy', function () {
  this.timeout(60_000);
  let database: FaultDatabase;
  let proxy: TcpProxy;
  let server: ServerProcess;
  let base: string;

  before(async () => {
    const redis = new URL(requiredEnv('REDIS_URL'));
    database = await faultDatabase();
    proxy = await startTcpProxy({ host: redis.hostname, port: Number(redis.port || 6379) });
    server = startServerProcess({
      DATABASE_URL: database.url,
      REDIS_URL: proxy.urlFor(redis.toString()),
      REDIS_KEY_PREFIX: `rl:fault:${randomBytes(4).toString('hex')}:`,
    });
    base = await server.listening;
  });
  after(async () => {
    server?.child.kill('SIGKILL');
    await server?.exited;
    await proxy?.close();
    await database?.drop();
  });

  const health = () => call(`${base}/api/v1/health`, { headers: { 'X-Service-API-Key': database.partnerKey } });
  const tasks = () => call(`${base}/api/tasks`, { headers: { 'X-Service-API-Key': database.studentKey } });
  const signIn = () =>
    call(`${base}/oauth/authorize`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'email=a%40example.com&password=wrong',
    });
  const signUp = () =>
    call(`${base}/api/accounts`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        email: `fault-${randomBytes(4).toString('hex')}@example.com`,
        password: 'a long enough password',
        nickname: `f${randomBytes(4).toString('hex')}`,
        first_name: 'F',
        time_zone: 'UTC',
        country_code: 'kz',
      }),
    });
  /** Requests left in the key's minute window, from the RateLimit header. */
  const remaining = (answer: { headers: Headers }) =>
    Number(/"minute"; r=(\d+)/.exec(answer.headers.get('ratelimit') ?? '')?.[1]);

  it('fails open for quotas, closed for throttles, never hangs, and counts in Redis again within 10 s', async () => {
    const first = await health();
    const second = await health();
    assert.equal(second.status, 200);
    assert.equal(remaining(second), remaining(first) - 1, 'counted in Redis before the outage');

    await proxy.stop();
    for (let round = 0; round < 3; round++) {
      for (const [what, answer] of [
        ['GET /api/v1/health', await health()],
        ['GET /api/tasks', await tasks()],
      ] as const) {
        assert.equal(answer.status, 200, `${what} during the outage: ${answer.status} ${JSON.stringify(answer.body)}`);
        assert.ok(answer.ms < ANSWER_WITHIN_MS, `${what} took ${Math.round(answer.ms)} ms`);
      }
      const refusedSignIn = await signIn();
      assert.equal(refusedSignIn.status, 503, `sign-in during the outage: ${refusedSignIn.status}`);
      assert.match(refusedSignIn.headers.get('retry-after') ?? '', /^\d+$/);
      assert.ok(refusedSignIn.ms < ANSWER_WITHIN_MS, `sign-in took ${Math.round(refusedSignIn.ms)} ms`);
      const refusedSignUp = await signUp();
      assertServiceUnavailable(refusedSignUp, 'POST /api/accounts during the outage');
      assert.ok(refusedSignUp.ms < ANSWER_WITHIN_MS, `sign-up took ${Math.round(refusedSignUp.ms)} ms`);
    }

    await proxy.start();
    const tookMs = await until(
      async () => {
        const [a, b] = [await health(), await health()];
        return a.status === 200 && b.status === 200 && remaining(b) === remaining(a) - 1;
      },
      10_000,
      'shared counters after Redis returned',
    );
    console.log(`      counting in Redis again ${Math.round(tookMs)} ms after its return`);
    // Past the throttle again: the form reaches its own checks (no registered client here: 400).
    assert.equal((await signIn()).status, 400, 'the sign-in throttle lets requests through again');
    assert.equal(server.child.exitCode, null, `the server died:\n${server.output()}`);
  });
});
