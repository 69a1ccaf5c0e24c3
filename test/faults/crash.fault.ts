// A crash (kill -9) of the real server process on PostgreSQL + Redis while idempotent POSTs are in flight, then a
// restart on the same database and a retry of every request with its Idempotency-Key: nothing lost, nothing
// doubled, and no retry answered with a 5xx.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { crashServers, faultDatabase, requiredEnv, type FaultDatabase } from './support/fixture.ts';

/** Requests in flight when the process is killed. */
const REQUESTS = 60;

interface Attempt {
  key: string;
  title: string;
  /** The first answer, when one came before the kill. */
  first?: { status: number; body: { id: string } };
}

describe('kill -9 during idempotent POST /api/tasks, then retries', function () {
  this.timeout(60_000);
  const redisUrl = requiredEnv('REDIS_URL');
  let database: FaultDatabase;
  const servers = crashServers(() => database, redisUrl);

  before(async () => {
    database = await faultDatabase('sc_fault_crash');
  });
  after(async () => {
    servers.killAll();
    await database?.drop();
  });

  const start = servers.start;
  const post = (baseUrl: string, attempt: Attempt) =>
    fetch(`${baseUrl}/api/tasks`, {
      method: 'POST',
      headers: {
        'X-Service-API-Key': database.studentKey,
        'Idempotency-Key': attempt.key,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ title: attempt.title, due_at: '2030-06-01T09:00:00Z', course: 'Fault suite' }),
    });

  it('creates every task exactly once across the crash, and every retry answers 201', async () => {
    const first = start();
    const firstUrl = await first.listening;
    const run = randomUUID().slice(0, 8);
    const attempts: Attempt[] = Array.from({ length: REQUESTS }, (_, i) => ({
      key: randomUUID(),
      title: `crash ${run} #${i}`,
    }));
    let answered = 0;
    const inFlight = attempts.map((attempt) =>
      post(firstUrl, attempt).then(
        async (response) => {
          attempt.first = { status: response.status, body: (await response.json()) as { id: string } };
          answered += 1;
        },
        () => {}, // cut by the kill
      ),
    );
    while (answered < REQUESTS / 4) await new Promise((resolve) => setTimeout(resolve, 5));
    first.child.kill('SIGKILL');
    await first.exited;
    await Promise.all(inFlight);
    const cut = attempts.filter((a) => !a.first).length;
    assert.ok(cut > 0, 'some requests were still in flight when the process died');
    for (const attempt of attempts) if (attempt.first) assert.equal(attempt.first.status, 201);

    const second = start();
    const secondUrl = await second.listening;
    const retries = await Promise.all(
      attempts.map(async (attempt) => {
        const response = await post(secondUrl, attempt);
        return {
          attempt,
          status: response.status,
          replayed: response.headers.get('idempotent-replayed'),
          body: (await response.json()) as { id: string; title: string },
        };
      }),
    );
    for (const { attempt, status, replayed, body } of retries) {
      assert.equal(status, 201, `${attempt.title}: ${JSON.stringify(body)}`);
      assert.equal(body.title, attempt.title);
      if (attempt.first) {
        assert.equal(replayed, 'true', 'an answered request is replayed');
        assert.deepEqual(body, attempt.first.body);
      }
    }

    const stored = await database.db
      .selectFrom('tasks')
      .select(['id', 'title'])
      .where('user_id', '=', database.studentId)
      .where('title', 'like', `crash ${run} #%`)
      .execute();
    assert.equal(stored.length, REQUESTS, 'nothing lost, nothing doubled');
    assert.deepEqual(
      new Set(stored.map((task) => task.id)),
      new Set(retries.map((retry) => retry.body.id)),
      'each retry answers with the one task stored for its key',
    );
    second.child.kill('SIGTERM');
    assert.equal(await second.exited, 0);
  });
});
