// PostgreSQL connections terminated under load (what a failover or a restart does to the pool): the server
// process survives, every request gets a 2xx or a 503 problem, the pool heals by itself within 10 s, and no write
// is left half done — every task POST retried with its Idempotency-Key ends with exactly one task.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { startServerProcess, type ServerProcess } from '../support/server-process.ts';
import {
  assertServiceUnavailable,
  attempt,
  faultDatabase,
  requiredEnv,
  sleep,
  until,
  type Answer,
  type FaultDatabase,
} from './support/fixture.ts';

const TERMINATIONS = 4;
const WORKERS = 6;
/**
 * Healing by itself takes a request or two on new connections; what this tells apart is a pool that stays broken,
 * so the bound is wide: three times the server's longest wait for the database (a statement's 10 s).
 */
const HEALS_WITHIN_MS = 30_000;

describe('PostgreSQL connections terminated under load', function () {
  this.timeout(120_000);
  let database: FaultDatabase;
  let server: ServerProcess;
  let base: string;

  before(async () => {
    database = await faultDatabase();
    server = startServerProcess({ DATABASE_URL: database.url, REDIS_URL: undefined });
    base = await server.listening;
  });
  after(async () => {
    server?.child.kill('SIGKILL');
    await server?.exited;
    await database?.drop();
  });

  /** Ends every backend of the throwaway database but the one asking; returns how many it ended. */
  async function terminateBackends(): Promise<number> {
    const admin = new pg.Client({ connectionString: requiredEnv('DATABASE_URL') });
    await admin.connect();
    try {
      const { rows } = await admin.query(
        'select pg_terminate_backend(pid) as ended from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
        [database.name],
      );
      return rows.filter((row) => row.ended).length;
    } finally {
      await admin.end();
    }
  }

  const readUniversities = () =>
    attempt(`${base}/api/v1/universities?limit=5`, { headers: { 'X-Service-API-Key': database.partnerKey } });
  const createTask = (title: string, key: string) =>
    attempt(`${base}/api/tasks`, {
      method: 'POST',
      headers: { 'X-Service-API-Key': database.studentKey, 'Content-Type': 'application/json', 'Idempotency-Key': key },
      body: JSON.stringify({ title, due_at: '2026-12-01T10:00:00Z', course: 'Fault drills' }),
    });

  it('survives, answers 2xx or 503 problem+json, heals by itself and leaves no write half done', async () => {
    const answers: Array<{ what: string; answer: Answer }> = [];
    const posts = new Map<string, { title: string; status: number }>();
    let loading = true;
    const worker = async (n: number) => {
      for (let i = 0; loading; i++) {
        if (i % 2 === 0) {
          answers.push({ what: 'GET /api/v1/universities', answer: await readUniversities() });
        } else {
          const key = randomUUID();
          const title = `drill ${n}-${i}`;
          const answer = await createTask(title, key);
          posts.set(key, { title, status: answer.status });
          answers.push({ what: 'POST /api/tasks', answer });
        }
        if (answers.at(-1)!.answer.status === 0) await sleep(100); // no answer at all: the assertions below say why
      }
    };
    const load = Promise.all(Array.from({ length: WORKERS }, (_, n) => worker(n)));

    let terminated = 0;
    for (let i = 0; i < TERMINATIONS; i++) {
      await sleep(600);
      terminated += await terminateBackends();
    }
    const lastFault = performance.now();
    await sleep(300);
    loading = false;
    await load;

    assert.ok(terminated > 0, 'the test ended no backend: it proves nothing');
    assert.equal(server.child.exitCode, null, `the server died:\n${server.output()}`);
    for (const { what, answer } of answers) {
      if (answer.status >= 200 && answer.status < 300) continue;
      assertServiceUnavailable(answer, what);
    }
    const unavailable = answers.filter(({ answer }) => answer.status === 503).length;
    console.log(`      ${answers.length} requests, ${terminated} backends ended, ${unavailable} answered 503`);

    // Heals by itself: both a read and a write succeed again soon after the last termination.
    await until(
      async () =>
        (await readUniversities()).status === 200 &&
        (await createTask(`after ${randomUUID()}`, randomUUID())).status === 201,
      HEALS_WITHIN_MS,
      'recovery',
    );
    const healedMs = Math.round(performance.now() - lastFault);
    assert.ok(healedMs < HEALS_WITHIN_MS, `recovered ${healedMs} ms after the last fault`);

    // Nothing half written: every POST retried with its key ends 201, and each title exists exactly once.
    for (const [key, post] of posts) {
      if (post.status === 201) continue;
      const retried = await createTask(post.title, key);
      assert.equal(retried.status, 201, `retry of ${post.title}: ${retried.status} ${JSON.stringify(retried.body)}`);
    }
    const rows = await database.db
      .selectFrom('tasks')
      .select(['title'])
      .where('course', '=', 'Fault drills')
      .where('title', 'like', 'drill %')
      .execute();
    const counts = new Map<string, number>();
    for (const { title } of rows) counts.set(title, (counts.get(title) ?? 0) + 1);
    assert.deepEqual(
      [...counts.values()].filter((n) => n !== 1),
      [],
      'a task was written twice',
    );
    assert.deepEqual(new Set(counts.keys()), new Set([...posts.values()].map((p) => p.title)), 'a task was lost');
  });
});
