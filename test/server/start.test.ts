// `npm start` as a newcomer runs it: a fresh embedded database, printed demo keys (partner, and the demo student's
// personal key) that work, and a clean stop on SIGTERM. Runs the real entry point in a child process.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServerProcess } from '../support/server-process.ts';

describe('npm start (server/main.ts)', function () {
  this.timeout(180_000);
  let dataDir: string;
  before(() => (dataDir = mkdtempSync(join(tmpdir(), 'sc-start-'))));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  const start = () => startServerProcess({ DATA_DIR: dataDir, DATABASE_URL: undefined, REDIS_URL: undefined });

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
