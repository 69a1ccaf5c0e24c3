// Start-up with a dependency that is not there: the process exits non-zero within 10 s, with one line that names
// what it could not reach (before the fix it printed nothing and never listened).
import assert from 'node:assert/strict';
import { startServerProcess } from '../support/server-process.ts';
import { closedPort } from '../support/tcp-proxy.ts';
import { faultDatabase, requiredEnv, type FaultDatabase } from './support/fixture.ts';

const EXIT_WITHIN_MS = 10_000;

async function failedStart(env: Record<string, string | undefined>): Promise<{ code: number | null; ms: number; lines: string[] }> {
  const started = performance.now();
  const server = startServerProcess(env);
  const timer = setTimeout(() => server.child.kill('SIGKILL'), 20_000);
  const code = await server.exited;
  clearTimeout(timer);
  return { code, ms: performance.now() - started, lines: server.output().split('\n').filter((line) => line.trim() !== '') };
}

describe('start-up with an unreachable dependency', function () {
  this.timeout(60_000);
  let database: FaultDatabase;
  before(async () => {
    requiredEnv('REDIS_URL');
    database = await faultDatabase();
  });
  after(() => database?.drop());

  it('exits non-zero within 10 s with one line naming Redis when Redis is unreachable', async () => {
    const port = await closedPort();
    const { code, ms, lines } = await failedStart({ DATABASE_URL: database.url, REDIS_URL: `redis://127.0.0.1:${port}` });
    assert.ok(code !== 0 && code !== null, `exit code ${code}`);
    assert.ok(ms < EXIT_WITHIN_MS, `exited after ${Math.round(ms)} ms`);
    assert.equal(lines.length, 1, `one line, got:\n${lines.join('\n')}`);
    assert.match(lines[0]!, new RegExp(`cannot reach Redis \\(redis://127\\.0\\.0\\.1:${port}\\)`));
  });

  it('exits non-zero within 10 s with one line naming the database when PostgreSQL is unreachable', async () => {
    const port = await closedPort();
    const { code, ms, lines } = await failedStart({ DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/nowhere`, REDIS_URL: requiredEnv('REDIS_URL') });
    assert.ok(code !== 0 && code !== null, `exit code ${code}`);
    assert.ok(ms < EXIT_WITHIN_MS, `exited after ${Math.round(ms)} ms`);
    assert.equal(lines.length, 1, `one line, got:\n${lines.join('\n')}`);
    assert.match(lines[0]!, new RegExp(`cannot reach the database \\(PostgreSQL at 127\\.0\\.0\\.1:${port}/nowhere\\)`));
  });
});
