// The embedded database's files are the owner's alone, whatever the umask `npm start` runs under: a first start on a
// new DATA_DIR makes nothing another user could read or write (the data, the keys, the lock, the CLI's socket, the
// template cache), neither do the writes while it runs and at its stop; a later start tightens what was loosened
// since, and says how much in one log line; `config check` reports a loosened directory. The real entry point in a
// child process, started under umask 000. The case is bounded step by step (test/support/step-bound.ts): each start,
// stop and CLI run is a step, held to the bound each CLI run is killed within (test/support/run-node.ts).
import assert from 'node:assert/strict';
import { chmodSync, lstatSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TEMPLATE_CACHE } from '../../db/pglite-template.ts';
import { reachableEntries } from '../../db/private-files.ts';
import { takeCheckoutLock } from '../support/checkout-lock.ts';
import { CLI, runNode } from '../support/run-node.ts';
import { startServerProcess, TEST_SECRETS_KEY } from '../support/server-process.ts';
import { casesInSteps, PROCESS_STEP_BOUND_MS } from '../support/step-bound.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const PERMISSIVE = 0o000;
const it = casesInSteps(PROCESS_STEP_BOUND_MS);

describe('private files: the embedded database under umask 000', function () {
  // The hooks' bound; the case is bounded step by step.
  this.timeout(PROCESS_STEP_BOUND_MS);
  let parent: string;
  let dataDir: string;
  let release = () => {};
  before(async function () {
    // The test loosens the checkout's template cache, which the same test in a run beside this one checks: one at a
    // time. The wait is that test's time, on a machine as loaded as it may be.
    this.timeout(600_000);
    release = await takeCheckoutLock(`${TEMPLATE_CACHE}.test-lock`);
    parent = mkdtempSync(join(tmpdir(), 'sc-private-'));
    dataDir = join(parent, 'data'); // not there yet: the start makes it
  });
  after(() => {
    if (parent) rmSync(parent, { recursive: true, force: true });
    release();
  });

  const start = () =>
    startServerProcess(
      { DATA_DIR: dataDir, DATABASE_URL: undefined, REDIS_URL: undefined, SHUTDOWN_DRAIN_SECONDS: '0' },
      [],
      { umask: PERMISSIVE },
    );
  /** What other users could reach, as `path mode` lines (empty: nothing). */
  const reachable = (path: string) =>
    reachableEntries(path).reachable.map((entry) => `${entry.path} ${entry.mode.toString(8)}`);
  const configCheck = () => {
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, SECRETS_KEY: TEST_SECRETS_KEY };
    delete env.DATABASE_URL;
    return runNode([...CLI, 'config', 'check'], root, env);
  };

  it('starts with nothing others can reach; the next start tightens a loosened install; config check', async () => {
    assert.match((await configCheck()).stdout, /^data files\s+not created yet/m);
    const first = start();
    const url = await first.listening;
    // A write while it runs: a new account's rows, in files PostgreSQL may create now.
    const account = { email: 'pat@example.com', password: 'long enough password', nickname: 'pat', first_name: 'Pat' };
    const headers = { 'content-type': 'application/json' };
    const created = await fetch(`${url}/api/accounts`, { method: 'POST', headers, body: JSON.stringify(account) });
    assert.equal(created.status, 201);
    assert.ok(reachableEntries(dataDir).entries > 100, 'the database is there');
    assert.deepEqual(reachable(dataDir), [], 'while it runs (the data, keys, lock and socket)');
    assert.deepEqual(reachable(TEMPLATE_CACHE), [], 'the template cache');
    first.child.kill('SIGTERM');
    assert.equal(await first.exited, 0, first.output());
    assert.deepEqual(reachable(dataDir), [], 'after its stop');

    // Loosened since: every entry of the data directory and one of the template cache open to everyone.
    const entries = reachableEntries(dataDir).entries;
    // PostgreSQL deletes its relation cache files (pg_internal.init) as it starts, before or after the walk that
    // tightens: those loosened files may be gone, not tightened.
    const cacheFiles = (readdirSync(dataDir, { recursive: true }) as string[]).filter((name) =>
      name.endsWith('pg_internal.init'),
    ).length;
    loosen(dataDir);
    chmodSync(TEMPLATE_CACHE, 0o777);
    const check = await configCheck();
    assert.equal(check.code, 0, check.stderr);
    const found = new RegExp(`^data files\\s+${entries} of ${entries} entries other users can reach$`, 'm');
    assert.match(check.stdout, found);
    assert.match(check.stderr, /^finding: other users can read or write \d+ files and directories .*: the next start/m);

    const second = start();
    await second.listening;
    const line = await second.waitFor(/"entries":(\d+),"msg":"\d+ files and directories of the embedded database/);
    const tightened = Number(line[1]);
    assert.ok(
      tightened <= entries + 1 && tightened >= entries + 1 - cacheFiles,
      `${tightened} tightened of ${entries} + 1 loosened, ${cacheFiles} of them relation cache files\n${second.output()}`,
    );
    assert.deepEqual(reachable(dataDir), []);
    assert.deepEqual(reachable(TEMPLATE_CACHE), []);
    second.child.kill('SIGTERM');
    assert.equal(await second.exited, 0, second.output());
    assert.match((await configCheck()).stdout, /^data files\s+owner only$/m);
  });
});

describe('private files: the compiled server and CLI', () => {
  it("dist/, written by the install and by a start that rebuilt, is the owner's alone", async () => {
    const dist = join(root, 'dist');
    const found = reachableEntries(dist);
    assert.ok(found.entries > 2, 'the bundles are there');
    assert.deepEqual(
      found.reachable.map((entry) => `${entry.path} ${entry.mode.toString(8)}`),
      [],
    );
  });
});

/** Read and write for everyone on `dir` and every entry in it, directories searchable too. */
function loosen(dir: string): void {
  chmodSync(dir, 0o777);
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const path = join(dir, name);
    chmodSync(path, lstatSync(path).isDirectory() ? 0o777 : 0o666);
  }
}
