// `npm run mock` as a process manager or a terminal's job control runs it: SIGTERM goes to the pid npm gave, and the
// mock must stop with it. npm passes the signal to its own child only, so a shell or wrapper in between that does not
// pass it on would leave the mock serving on its port (the script execs, as npm start does).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { closedPort } from '../support/tcp-proxy.ts';

const root = new URL('../../', import.meta.url).pathname;

/** Whether something accepts a TCP connection on the port. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

/** Polls every 100 ms until `accepts(port)` is `wanted`; false if `ms` pass first. */
async function until(port: number, wanted: boolean, ms: number): Promise<boolean> {
  for (
    const deadline = Date.now() + ms;
    Date.now() < deadline;
    await new Promise((resolve) => setTimeout(resolve, 100))
  ) {
    if ((await accepts(port)) === wanted) return true;
  }
  return false;
}

describe('npm run mock (scripts/mock.ts) as a process', function () {
  this.timeout(90_000);

  it('stops when the pid npm run mock gives receives SIGTERM', async () => {
    const port = await closedPort();
    const npm = spawn('npm', ['run', 'mock', '--silent'], {
      cwd: root,
      env: { ...process.env, MOCK_PORT: String(port), LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // a group of its own, so that whatever a failing run leaves behind is ended with it
    });
    let output = '';
    npm.stdout!.on('data', (chunk) => (output += chunk));
    npm.stderr!.on('data', (chunk) => (output += chunk));
    const exited = new Promise((resolve) => npm.once('exit', resolve));
    try {
      assert.ok(await until(port, true, 60_000), `the mock never listened on ${port}:\n${output}`);
      npm.kill('SIGTERM');
      await exited;
      assert.ok(await until(port, false, 5_000), `port ${port} still accepts connections 5 s after SIGTERM to npm`);
    } finally {
      try {
        process.kill(-npm.pid!, 'SIGKILL');
      } catch {
        // the group has already ended
      }
    }
  });
});
