// `npm run cli` while `npm start` runs on the embedded database (app/cli/server-socket.ts): real processes, as an
// operator runs them. The command runs in the server, its effect shows through the API at once, the socket is the
// owner's only and goes with the stop, and a socket file left by a killed server does not stand in the CLI's way. The
// cases share one data directory, as one operator's session: the last one restarts what the first one made. Each case
// is bounded step by step (test/support/step-bound.ts): a start, a stop, a CLI run each end a step.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createConnection, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cliSocketPath, runInServer, SERVER_SILENCE_LIMIT_MS } from '../../app/cli/server-socket.ts';
import { CLI, runNode } from '../support/run-node.ts';
import { startServerProcess, TEST_SECRETS_KEY } from '../support/server-process.ts';
import { casesInSteps, PROCESS_STEP_BOUND_MS } from '../support/step-bound.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const KEY = 'svc_live_[0-9A-Za-z]{32}';
const it = casesInSteps(PROCESS_STEP_BOUND_MS);

describe('npm run cli while npm start runs on the embedded database', function () {
  // The hooks' bound; the cases are bounded step by step.
  this.timeout(PROCESS_STEP_BOUND_MS);
  let dataDir: string;
  before(() => (dataDir = mkdtempSync(join(tmpdir(), 'sc-cli-socket-'))));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  const start = () =>
    startServerProcess({
      DATA_DIR: dataDir,
      DATABASE_URL: undefined,
      REDIS_URL: undefined,
      SHUTDOWN_DRAIN_SECONDS: '0',
    });

  function cli(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, SECRETS_KEY: TEST_SECRETS_KEY };
    delete env.DATABASE_URL;
    delete env.DEBUG;
    return runNode([...CLI, ...args], root, env);
  }

  it('runs a command in the server, whose API shows its effect at once; refuses what would hold the server; removes the socket on stop', async () => {
    const server = start();
    const url = await server.listening;
    const firstPartnerKey = new RegExp(`demo partner key[^\\n]*\\n\\s*(${KEY})`).exec(server.output())?.[1];
    assert.ok(firstPartnerKey, server.output());
    assert.match(server.output(), /demo credentials/, 'the banner says how to get the demo credentials again');
    assert.equal(statSync(cliSocketPath(dataDir)).mode & 0o777, 0o600, 'only the owner of the data may use the socket');

    const remade = await cli('demo', 'credentials');
    assert.equal(remade.code, 0, remade.stderr);
    assert.match(remade.stderr, /through the server that has it open/);
    const partnerKey = new RegExp(`^partner key: +(${KEY})$`, 'm').exec(remade.stdout)?.[1];
    const personalKey = new RegExp(`^personal key: +(${KEY})$`, 'm').exec(remade.stdout)?.[1];
    assert.ok(partnerKey && personalKey, remade.stdout);

    const health = (key: string) =>
      fetch(`${url}/api/v1/health`, { headers: { 'X-Service-API-Key': key } }).then((res) => res.status);
    assert.equal(await health(partnerKey), 200, 'the new partner key works');
    assert.equal(await health(firstPartnerKey), 401, 'the first one is revoked, for the running server too');
    assert.equal((await fetch(`${url}/api/today/loop`, { headers: { 'X-Service-API-Key': personalKey } })).status, 200);

    // Output and exit codes come back as a local run gives them: a listing on stdout, a usage error as 2.
    const listed = await cli('keys', 'list');
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /demo key \(first start\) +60 +10000 .* revoked\n.*demo key +60 +10000 .* active/s);
    const wrong = await cli('keys', 'revoke', 'not-a-prefix');
    assert.equal(wrong.code, 2);
    assert.match(wrong.stderr, /^error: keys revoke: PREFIX is svc_live_/m);

    const scale = await cli('seed', '--scale', '10');
    assert.equal(scale.code, 1);
    assert.match(scale.stderr, /^error: seed --scale .*stop the server/m);

    // A connection that never sends a command line does not hold the stop.
    const idle = createConnection(cliSocketPath(dataDir));
    await once(idle, 'connect');
    idle.on('error', () => {});
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0);
    assert.equal(existsSync(cliSocketPath(dataDir)), false, 'the socket is removed on stop');
  });

  it('gives up on a server that takes the command line and then says nothing, and says so', async () => {
    // A server that accepts and never answers: what a stuck or stopped (SIGSTOP) one looks like from the CLI.
    const held: Socket[] = [];
    const mute = createServer((socket) => void held.push(socket));
    mute.listen(cliSocketPath(dataDir));
    await once(mute, 'listening');
    try {
      // Its own limit (0.3 s here), not the default one (a minute): the bound is a third of the default.
      const startedAt = performance.now();
      await assert.rejects(
        runInServer(dataDir, ['keys', 'list'], false, 300),
        /has not answered for 0.3 s; it may be stuck or stopped/,
      );
      const tookMs = Math.round(performance.now() - startedAt);
      assert.ok(tookMs < SERVER_SILENCE_LIMIT_MS / 3, `gave up after ${tookMs} ms`);
    } finally {
      for (const socket of held) socket.destroy();
      await new Promise((resolve) => mute.close(resolve));
    }
  });

  it('opens the database itself when a killed server left its socket file behind', async () => {
    // The first case's database (a new one when this case runs alone): a server killed on it, then started again.
    const server = start();
    await server.listening;
    server.child.kill('SIGKILL');
    await server.exited;
    assert.ok(existsSync(cliSocketPath(dataDir)), 'a killed server cannot remove its socket');

    const listed = await cli('keys', 'list');
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /demo key \(first start\)/);
    assert.doesNotMatch(listed.stderr, /through the server/);

    // The next start replaces the stale socket and serves the CLI again.
    const again = start();
    await again.listening;
    const through = await cli('keys', 'list');
    assert.equal(through.code, 0, through.stderr);
    assert.match(through.stderr, /through the server that has it open/);
    again.child.kill('SIGTERM');
    assert.equal(await again.exited, 0);
  });
});
