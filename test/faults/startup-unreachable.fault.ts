// Start-up with a dependency that is not there: the process exits non-zero within 10 s, with one line that names
// what it could not reach (before the fix it printed nothing and never listened). Loading the code alone can take
// longer than that on a crowded machine, so the bound stretches to what a start that fails at once (a bad PORT),
// started alongside, takes there, plus 3 s: the checks themselves must never wait long.
import assert from 'node:assert/strict';
import { startServerProcess } from '../support/server-process.ts';
import { closedPort } from '../support/tcp-proxy.ts';
import { faultDatabase, requiredEnv, type FaultDatabase } from './support/fixture.ts';

const EXIT_WITHIN_MS = 10_000;

async function failedStart(
  env: Record<string, string | undefined>,
): Promise<{ code: number | null; ms: number; lines: string[] }> {
  const started = performance.now();
  const server = startServerProcess(env);
  const timer = setTimeout(() => server.child.kill('SIGKILL'), 45_000); // a hang fails the bound below, not the run
  const code = await server.exited;
  clearTimeout(timer);
  return {
    code,
    ms: performance.now() - started,
    lines: server
      .output()
      .split('\n')
      .filter((line) => line.trim() !== ''),
  };
}

describe('start-up with an unreachable dependency', function () {
  this.timeout(60_000);
  let database: FaultDatabase;
  before(async () => {
    requiredEnv('REDIS_URL');
    database = await faultDatabase();
  });

  /** The failed start, and its time bound from a start that fails at once, run at the same time. */
  async function failedStartWithBudget(env: Record<string, string | undefined>) {
    const [failed, immediate] = await Promise.all([failedStart(env), failedStart({ PORT: 'not a port' })]);
    return { ...failed, budgetMs: Math.max(EXIT_WITHIN_MS, immediate.ms + 3_000) };
  }
  after(() => database?.drop());

  it('exits non-zero within 10 s with one line naming Redis when Redis is unreachable', async () => {
    const port = await closedPort();
    const { code, ms, lines, budgetMs } = await failedStartWithBudget({
      DATABASE_URL: database.url,
      REDIS_URL: `redis://127.0.0.1:${port}`,
    });
    assert.ok(code !== 0 && code !== null, `exit code ${code}`);
    assert.ok(ms < budgetMs, `exited after ${Math.round(ms)} ms (budget ${Math.round(budgetMs)} ms)`);
    assert.equal(lines.length, 1, `one line, got:\n${lines.join('\n')}`);
    assert.match(lines[0]!, new RegExp(`cannot reach Redis at 127\\.0\\.0\\.1:${port}: .*ECONNREFUSED`));
  });

  it('exits non-zero within 10 s with one line naming the database when PostgreSQL is unreachable', async () => {
    const port = await closedPort();
    const { code, ms, lines, budgetMs } = await failedStartWithBudget({
      DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/nowhere`,
      REDIS_URL: requiredEnv('REDIS_URL'),
    });
    assert.ok(code !== 0 && code !== null, `exit code ${code}`);
    assert.ok(ms < budgetMs, `exited after ${Math.round(ms)} ms (budget ${Math.round(budgetMs)} ms)`);
    assert.equal(lines.length, 1, `one line, got:\n${lines.join('\n')}`);
    assert.match(lines[0]!, new RegExp(`cannot reach PostgreSQL at 127\\.0\\.0\\.1:${port}/nowhere: .*ECONNREFUSED`));
  });
});
