// `npm start` as a newcomer runs it: a fresh embedded database, printed demo keys (partner, and the demo student's
// personal key) that work, and a clean stop on SIGTERM. Runs the real entry point in a child process.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('../../', import.meta.url).pathname;

describe('npm start (server/main.ts)', function () {
  this.timeout(180_000);
  let dataDir: string;
  before(() => (dataDir = mkdtempSync(join(tmpdir(), 'sc-start-'))));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  function start() {
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
    delete env.DATABASE_URL;
    delete env.REDIS_URL;
    const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const listening = new Promise<string>((resolve, reject) => {
      const poll = setInterval(() => {
        const url = /listening on (http:\/\/localhost:\d+)/.exec(output)?.[1];
        if (url) (clearInterval(poll), resolve(url));
      }, 100);
      void exited.then((code) => (clearInterval(poll), reject(new Error(`exited with ${code} before listening:\n${output}`))));
    });
    return { child, listening, exited, output: () => output };
  }

  it('seeds an empty embedded database, prints a working demo key once, and stops cleanly on SIGTERM', async () => {
    const first = start();
    const url = await first.listening;
    const key = /svc_live_[0-9A-Za-z]{32}/.exec(first.output())?.[0];
    assert.ok(key, `a demo key is printed:\n${first.output()}`);
    const health = await fetch(`${url}/api/v1/health`, { headers: { 'X-Service-API-Key': key } });
    assert.equal(health.status, 200);
    const universities = await fetch(`${url}/api/v1/universities?limit=100`, { headers: { Authorization: `Bearer ${key}` } });
    assert.ok(((await universities.json()) as unknown[]).length >= 30);
    // The demo student's personal key works on the general surface, whose daily loop starts with the overdue task.
    const personalKey = /personal API key[^\n]*\n\s*(svc_live_[0-9A-Za-z]{32})/.exec(first.output())?.[1];
    assert.ok(personalKey && personalKey !== key, `a demo student key is printed:\n${first.output()}`);
    const loop = await fetch(`${url}/api/today/loop`, { headers: { 'X-Service-API-Key': personalKey } });
    assert.equal(loop.status, 200);
    const { next_action } = (await loop.json()) as { next_action: { kind: string; item: { title: string } } };
    assert.deepEqual([next_action.kind, next_action.item.title], ['do_task', 'Lab report: muscle fatigue']);
    first.child.kill('SIGTERM');
    assert.equal(await first.exited, 0);

    // A second start keeps the data, and the key stays secret: it is not printed again.
    const second = start();
    const again = await second.listening;
    // While it runs, no other process may open the same embedded database (PGlite would lose writes).
    const intruder = start();
    await assert.rejects(intruder.listening, /in use by process/);
    assert.notEqual(await intruder.exited, 0);
    assert.doesNotMatch(second.output(), /svc_live_[0-9A-Za-z]{32}/);
    assert.match(second.output(), /keys create/);
    assert.equal((await fetch(`${again}/api/v1/health`, { headers: { 'X-Service-API-Key': key } })).status, 200);
    second.child.kill('SIGTERM');
    assert.equal(await second.exited, 0);
  });
});
