// `npm start` as a newcomer runs it: a fresh embedded database, printed demo keys (partner, and the demo student's
// personal key) that work, access tokens that survive a restart, a clean stop on SIGTERM, and start-up errors
// that say in one line what to fix. Runs the real entry point in a child process. Each case is bounded step by step
// (test/support/step-bound.ts): a start, a stop, a CLI run each end a step, so a loaded machine that stretches every
// step fails no case whose steps each end.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { connect } from '../../db/connect.ts';
import { createThrowawayDatabase } from '../../db/throwaway-database.ts';
import { SIGNING_KEYS_FILE } from '../../server/auth/signing-key-store.ts';
import { DEMO_STUDENT } from '../../app/demo-student.ts';
import { signIn, TEST_REDIRECT_URI } from '../support/oauth-flow.ts';
import { CLI, runNode } from '../support/run-node.ts';
import { startServerProcess, TEST_SECRETS_KEY } from '../support/server-process.ts';
import { casesInSteps, PROCESS_STEP_BOUND_MS, stepEnded } from '../support/step-bound.ts';
import { closedPort } from '../support/tcp-proxy.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const it = casesInSteps(PROCESS_STEP_BOUND_MS);

describe('npm start (app/main.ts)', function () {
  // The hooks' bound; the cases are bounded step by step.
  this.timeout(PROCESS_STEP_BOUND_MS);
  let dataDir: string;
  before(() => (dataDir = mkdtempSync(join(tmpdir(), 'sc-start-'))));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  // A fixed PUBLIC_URL: tokens name it as their issuer, so it must not follow the free port each start picks. No drain
  // before a stop: each would wait its 5 s; the drain is test/server/shutdown.test.ts's subject, and the `npm start`
  // test below keeps one, which tells the server from a wrapper that died alone.
  const start = () =>
    startServerProcess({
      DATA_DIR: dataDir,
      DATABASE_URL: undefined,
      REDIS_URL: undefined,
      PUBLIC_URL: 'http://localhost:3000',
      SHUTDOWN_DRAIN_SECONDS: '0',
    });

  it('seeds an empty embedded database, prints a working demo key once, and stops cleanly on SIGTERM', async () => {
    const first = start();
    const url = await first.listening;
    const key = /svc_live_[0-9A-Za-z]{32}/.exec(first.output())?.[0];
    assert.ok(key, `a demo key is printed:\n${first.output()}`);
    const health = await fetch(`${url}/api/v1/health`, { headers: { 'X-Service-API-Key': key } });
    assert.equal(health.status, 200);
    const universities = await fetch(`${url}/api/v1/universities?limit=100`, {
      headers: { Authorization: `Bearer ${key}` },
    });
    assert.ok(((await universities.json()) as unknown[]).length >= 30);
    // The demo student's personal key works on the general surface, whose daily loop starts with the overdue task.
    const personalKey = /personal API key[^\n]*\n\s*(svc_live_[0-9A-Za-z]{32})/.exec(first.output())?.[1];
    assert.ok(personalKey && personalKey !== key, `a demo student key is printed:\n${first.output()}`);
    const loop = await fetch(`${url}/api/today/loop`, { headers: { 'X-Service-API-Key': personalKey } });
    assert.equal(loop.status, 200);
    const { next_action } = (await loop.json()) as { next_action: { kind: string; item: { title: string } } };
    assert.deepEqual([next_action.kind, next_action.item.title], ['do_task', 'Lab report: muscle fatigue']);
    const password = /demo student \S+, password (\S+)/.exec(first.output())?.[1];
    assert.ok(password, `the demo student's password is printed:\n${first.output()}`);
    // An app, registered by the operator's CLI through the running server, and an access token it issues: both made
    // before the restart below, which must keep the one and still verify the other.
    const cliEnv: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, SECRETS_KEY: TEST_SECRETS_KEY };
    delete cliEnv.DATABASE_URL;
    const registered = await runNode(
      [
        ...CLI,
        'clients',
        'create',
        '--name',
        'restart test',
        '--redirect-uri',
        TEST_REDIRECT_URI,
        '--scopes',
        'profile:read',
      ],
      root,
      cliEnv,
    );
    assert.equal(registered.code, 0, registered.stderr);
    const client_id = registered.stdout.trimEnd().split('\n').at(-1)!;
    const signedIn = { client_id, email: DEMO_STUDENT.email, password, scope: 'profile:read' };
    const { access_token } = await signIn(url, signedIn);
    first.child.kill('SIGTERM');
    assert.equal(await first.exited, 0);
    // The signing key was made once and kept beside the data, readable by its owner only.
    assert.equal(statSync(join(dataDir, SIGNING_KEYS_FILE)).mode & 0o777, 0o600);

    // A second start keeps the data, and the key stays secret: it is not printed again.
    const second = start();
    const again = await second.listening;
    const me = (token: string) =>
      fetch(`${again}/api/users/me`, { headers: { Authorization: `Bearer ${token}` } }).then((res) => res.status);
    // An access token issued before a restart still verifies after it.
    assert.equal(await me(access_token), 200);
    // The app and the password made before the restart still sign the student in.
    assert.equal(await me((await signIn(again, signedIn)).access_token), 200);
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

  it('exits 1 with one line naming the variable when the port is taken, PORT is not a number or AI_BASE_URL lacks its key', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, resolve));
    const port = (taken.address() as AddressInfo).port;
    try {
      const cases: Array<[Record<string, string>, RegExp]> = [
        [{ PORT: String(port) }, new RegExp(`^could not start: PORT ${port} is already in use`)],
        [{ PORT: 'abc' }, /^could not start: PORT must be an integer from 0 to 65535, got "abc"$/],
        [{ AI_BASE_URL: 'https://ai.example/v1' }, /^could not start: AI_BASE_URL and AI_API_KEY must be set together/],
      ];
      // Side by side: only the first reaches the database (and its lock), the others stop at their settings.
      const runs = cases.map(([env]) =>
        startServerProcess({
          DATA_DIR: dataDir,
          DATABASE_URL: undefined,
          REDIS_URL: undefined,
          AI_API_KEY: undefined,
          ...env,
        }),
      );
      const codes = await Promise.all(runs.map((run) => run.exited));
      for (const [i, [, line]] of cases.entries()) {
        const run = runs[i]!;
        assert.equal(codes[i], 1, run.output());
        assert.deepEqual(run.output().trim().split('\n').length, 1, run.output());
        assert.match(run.output().trim(), line);
      }
    } finally {
      taken.close();
    }
  });

  it('on PostgreSQL too, a taken port is one line: the webhook worker started before the listen stops before the database closes', async function () {
    if (!process.env.DATABASE_URL) this.skip(); // the embedded case is the test above
    const throwaway = await createThrowawayDatabase(process.env.DATABASE_URL, 'sc_start_port');
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, resolve));
    const port = (taken.address() as AddressInfo).port;
    try {
      // A first start migrates and seeds, so that the second reaches its listen at once, its worker already polling.
      const first = startServerProcess({
        DATABASE_URL: throwaway.url,
        REDIS_URL: undefined,
        DATA_DIR: undefined,
        SHUTDOWN_DRAIN_SECONDS: '0',
      });
      await first.listening;
      first.child.kill('SIGTERM');
      assert.equal(await first.exited, 0, first.output());
      // Its banner's CLI hints carry what the CLI needs on PostgreSQL: the database, and the servers' key by name.
      const hint = /create a partner key: DATABASE_URL=\S+ SECRETS_KEY="\$SECRETS_KEY" npm run cli -- keys create/;
      assert.match(first.output(), hint);
      const run = startServerProcess({
        DATABASE_URL: throwaway.url,
        REDIS_URL: undefined,
        DATA_DIR: undefined,
        PORT: String(port),
        WEBHOOK_POLL_MS: '500',
      });
      assert.equal(await run.exited, 1, run.output());
      assert.deepEqual(run.output().trim().split('\n'), [
        `could not start: PORT ${port} is already in use (is another server running?); stop it or choose another port with PORT=`,
      ]);
    } finally {
      taken.close();
      await throwaway.drop();
    }
  });

  it('names a PostgreSQL database that does not exist, in one line', async function () {
    if (!process.env.DATABASE_URL) this.skip(); // needs a PostgreSQL server to ask
    const url = new URL(process.env.DATABASE_URL);
    url.pathname = '/sc_no_such_database';
    const run = startServerProcess({ DATABASE_URL: url.toString(), REDIS_URL: undefined });
    assert.equal(await run.exited, 1, run.output());
    assert.match(
      run.output().trim(),
      /^could not start: DATABASE_URL names the database "sc_no_such_database", which does not exist on [^\n]+; create it \(createdb [^\n]+\) or fix the URL$/,
    );
  });

  it('reaches Redis before it changes the database: a closed REDIS_URL fails in one line and leaves no table behind', async () => {
    // A throwaway PostgreSQL database, or a new embedded one when the run has none: after the failed start the first
    // has no table (kysely_migration included), the second no reference data.
    const throwaway = process.env.DATABASE_URL
      ? await createThrowawayDatabase(process.env.DATABASE_URL, 'sc_start_redis')
      : undefined;
    const emptyDir = throwaway ? undefined : mkdtempSync(join(tmpdir(), 'sc-start-redis-'));
    const target = throwaway ? { databaseUrl: throwaway.url } : { dataDir: emptyDir! };
    try {
      const port = await closedPort();
      const run = startServerProcess({
        DATABASE_URL: throwaway?.url,
        DATA_DIR: emptyDir,
        REDIS_URL: `redis://127.0.0.1:${port}`,
      });
      assert.equal(await run.exited, 1, run.output());
      assert.match(
        run.output().trim(),
        new RegExp(`^could not start: cannot reach Redis at 127\\.0\\.0\\.1:${port}: [^\\n]*ECONNREFUSED[^\\n]*$`),
      );
      const db = connect(target);
      try {
        if (throwaway) {
          const tables = await sql<{
            name: string;
          }>`select table_name as name from information_schema.tables where table_schema = 'public'`.execute(db);
          assert.deepEqual(tables.rows, [], 'no migration ran');
        } else {
          // A new embedded database is copied from a migrated template: what must not have happened is the seeding.
          const universities = await db
            .selectFrom('universities')
            .select((eb) => eb.fn.countAll<string>().as('count'))
            .executeTakeFirstOrThrow();
          assert.equal(Number(universities.count), 0, 'no reference data was loaded');
        }
      } finally {
        await db.destroy();
      }
    } finally {
      await throwaway?.drop();
      if (emptyDir) rmSync(emptyDir, { recursive: true, force: true });
    }
  });

  it('npm start is one process: SIGTERM to the pid npm start gives stops the server', async () => {
    // What a process manager does: start the command, later send SIGTERM to the pid it started.
    const child = spawn('npm', ['start', '--silent'], {
      cwd: new URL('../../', import.meta.url).pathname,
      // A drain of 2 s, not the default 5: a server left behind by a wrapper still answers the request 0.5 s after the
      // exit.
      env: {
        ...process.env,
        PORT: '0',
        LOG_LEVEL: 'warn',
        DATA_DIR: dataDir,
        DATABASE_URL: '',
        REDIS_URL: '',
        SHUTDOWN_DRAIN_SECONDS: '2',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stderr!.on('data', (chunk) => (output += chunk));
    const url = await new Promise<string>((resolve, reject) => {
      const poll = setInterval(() => {
        const found = /listening on (http:\/\/localhost:\d+)/.exec(output)?.[1];
        if (found) {
          clearInterval(poll);
          resolve(found);
        }
      }, 50);
      child.once('exit', () => (clearInterval(poll), reject(new Error(output))));
    });
    stepEnded();
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
    stepEnded();
    // Nothing is left serving: a wrapper that dies alone would leave the server answering here.
    await new Promise((resolve) => setTimeout(resolve, 500));
    await assert.rejects(fetch(`${url}/docs`), /fetch failed/);
  });
});
