// The graceful stop (server/process/lifecycle.ts over server/process/shutdown.ts) on a real HTTP server in this
// process: keep-alive clients are told to reconnect, a request in flight finishes, a connection accepted just before
// the listener closes is still served, the database is released only after the last handler, and the deadline wins over
// a request that hangs.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import express from 'express';
import { pino } from 'pino';
import { loadConfig, type Config } from '../../app/config.ts';
import { createLifecycle, gracefulStop } from '../../server/process/lifecycle.ts';

const silent = pino({ level: 'silent' });

/** An app with a quick route and a slow one, listening, with the graceful stop attached and its exit recorded. */
async function stoppableServer(options: { drainMs: number; deadlineMs: number; slowMs?: number }) {
  const lifecycle = createLifecycle();
  const app = express();
  let started!: () => void;
  const slowStarted = new Promise<void>((resolve) => (started = resolve));
  app.get('/quick', (_req, res) => res.json({ draining: lifecycle.draining }));
  app.get('/slow', (_req, res) => {
    started();
    setTimeout(() => res.json({ done: true }), options.slowMs ?? 300);
  });
  const server = app.listen(0, '127.0.0.1');
  const events: string[] = [];
  const stop = gracefulStop(server, lifecycle, {
    drainMs: options.drainMs,
    deadlineMs: options.deadlineMs,
    logger: silent,
    release: async () => void events.push('released'),
    exit: (code) => void events.push(`exit ${code}`),
  });
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return { lifecycle, server, port, stop, events, slowStarted };
}

function get(
  port: number,
  path: string,
  agent?: Agent,
): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent }, (res) => {
      let body = '';
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * The deadline of the tests that do not test it: a stop that reaches it fails them, so it is far beyond what a stop
 * takes on a loaded machine.
 */
const FAR_DEADLINE_MS = 60_000;

describe('graceful stop (server/process/lifecycle.ts)', function () {
  this.timeout(60_000);

  it('keeps serving during the drain, each response closing its connection, then refuses new connections; exit 0', async () => {
    // A drain far longer than the test, which ends it when idle: it ends once the connection the response closed
    // is gone, whatever the time the request took.
    const { port, stop, events, lifecycle } = await stoppableServer({
      drainMs: FAR_DEADLINE_MS / 2,
      deadlineMs: FAR_DEADLINE_MS,
    });
    const agent = new Agent({ keepAlive: true });
    const before = await get(port, '/quick', agent);
    assert.equal(before.headers.connection, 'keep-alive');
    const stopped = stop('test', { endWhenIdle: true });
    assert.equal(lifecycle.draining, true, 'not ready at once');
    const during = await get(port, '/quick', agent);
    assert.equal(during.status, 200);
    assert.equal(during.headers.connection, 'close', 'the client is told to open a new connection next time');
    assert.deepEqual(JSON.parse(during.body), { draining: true });
    assert.equal(await stopped, 0);
    assert.deepEqual(events, ['released', 'exit 0']);
    await assert.rejects(get(port, '/quick'), /ECONNREFUSED/);
    agent.destroy();
  });

  it('ends the drain at once when asked to end it when idle (SIGINT) and no connection is open', async () => {
    const drainMs = FAR_DEADLINE_MS / 2;
    const { port, stop, events } = await stoppableServer({ drainMs, deadlineMs: FAR_DEADLINE_MS });
    await get(port, '/quick', new Agent({ keepAlive: false })); // a request whose connection ends with it
    const startedAt = performance.now();
    assert.equal(await stop('SIGINT', { endWhenIdle: true }), 0);
    const tookMs = Math.round(performance.now() - startedAt);
    assert.ok(tookMs < drainMs / 3, `an idle stop took ${tookMs} ms of a ${drainMs} ms drain`);
    assert.deepEqual(events, ['released', 'exit 0']);
  });

  it('drains the whole period when idle by default (SIGTERM: a balancer may still send connections)', async () => {
    const { stop, server } = await stoppableServer({ drainMs: 400, deadlineMs: FAR_DEADLINE_MS });
    const stopped = stop('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(server.listening, true, 'new connections are still taken');
    assert.equal(await stopped, 0);
    assert.equal(server.listening, false);
  });

  it('keeps draining for its whole period while a keep-alive connection is open, even when asked to end when idle', async () => {
    const { port, stop, server } = await stoppableServer({ drainMs: 400, deadlineMs: FAR_DEADLINE_MS });
    const agent = new Agent({ keepAlive: true });
    await get(port, '/quick', agent);
    const stopped = stop('SIGINT', { endWhenIdle: true });
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(server.listening, true, 'the open connection may still bring a request');
    assert.equal(await stopped, 0);
    assert.equal(server.listening, false);
    agent.destroy();
  });

  it('lets a request in flight finish after the listener closed', async () => {
    const { port, stop, slowStarted } = await stoppableServer({ drainMs: 0, deadlineMs: FAR_DEADLINE_MS, slowMs: 500 });
    const inFlight = get(port, '/slow');
    await slowStarted;
    const stopped = stop('test');
    const response = await inFlight;
    assert.equal(response.status, 200);
    assert.equal(response.headers.connection, 'close');
    assert.equal(await stopped, 0);
  });

  it('serves a connection that was accepted before the listener closed but sent its request after', async () => {
    const { port, stop, server } = await stoppableServer({ drainMs: 0, deadlineMs: FAR_DEADLINE_MS });
    const accepted = once(server, 'connection');
    const socket = connect(port, '127.0.0.1');
    await accepted; // accepted by the server, no request yet
    const stopped = stop('test');
    while (server.listening) await new Promise((resolve) => setImmediate(resolve));
    let reply = '';
    socket.on('data', (chunk) => (reply += chunk));
    const ended = new Promise<void>((resolve, reject) => (socket.once('end', resolve), socket.once('error', reject)));
    socket.end('GET /quick HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await ended;
    assert.match(reply, /^HTTP\/1\.1 200 /);
    assert.match(reply, /\r\nConnection: close\r\n/i);
    assert.equal(await stopped, 0);
  });

  it('releases the database only after held work (a stream storing its reply) has finished', async () => {
    const { stop, events, lifecycle } = await stoppableServer({ drainMs: 0, deadlineMs: FAR_DEADLINE_MS });
    let finish!: () => void;
    void lifecycle.hold(new Promise<void>((resolve) => (finish = resolve)).then(() => void events.push('stored')));
    const streamsEnded = new Promise((resolve) => lifecycle.streamsEnd.addEventListener('abort', resolve));
    const stopped = stop('test');
    await streamsEnded;
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(events, [], 'nothing is released while a handler still runs');
    finish();
    assert.equal(await stopped, 0);
    assert.deepEqual(events, ['stored', 'released', 'exit 0']);
  });

  it('exits with code 1 at the deadline when a request hangs, cutting it off', async () => {
    const slowMs = FAR_DEADLINE_MS;
    const { port, stop, events, slowStarted } = await stoppableServer({ drainMs: 0, deadlineMs: 400, slowMs });
    const stuck = get(port, '/slow');
    await slowStarted;
    const startedAt = performance.now();
    assert.equal(await stop('test'), 1);
    const tookMs = Math.round(performance.now() - startedAt);
    assert.ok(tookMs < slowMs / 3, `the deadline, not the ${slowMs} ms request, ends the stop (${tookMs} ms)`);
    assert.equal(events[0], 'exit 1', 'nothing waits for the stuck request');
    await assert.rejects(stuck);
  });

  it('stops once, however many signals arrive', async () => {
    const { stop, events } = await stoppableServer({ drainMs: 50, deadlineMs: FAR_DEADLINE_MS });
    const [a, b] = [stop('SIGTERM'), stop('SIGINT')];
    assert.deepEqual([await a, await b], [0, 0]);
    assert.deepEqual(events, ['released', 'exit 0']);
  });
});

describe('stop settings (SHUTDOWN_DRAIN_SECONDS, SHUTDOWN_GRACE_SECONDS)', () => {
  it('drains 5 s within a 10 s deadline by default, and refuses a drain that would not end before the deadline', () => {
    assert.deepEqual(pickStop(loadConfig({})), { shutdownDrainSeconds: 5, shutdownGraceSeconds: 10 });
    assert.deepEqual(pickStop(loadConfig({ SHUTDOWN_GRACE_SECONDS: '3' })), {
      shutdownDrainSeconds: 2,
      shutdownGraceSeconds: 3,
    });
    assert.deepEqual(pickStop(loadConfig({ SHUTDOWN_DRAIN_SECONDS: '0', SHUTDOWN_GRACE_SECONDS: '1' })), {
      shutdownDrainSeconds: 0,
      shutdownGraceSeconds: 1,
    });
    assert.throws(
      () => loadConfig({ SHUTDOWN_DRAIN_SECONDS: '10' }),
      /SHUTDOWN_DRAIN_SECONDS \(10\) must be less than SHUTDOWN_GRACE_SECONDS \(10\)/,
    );
    assert.throws(
      () => loadConfig({ SHUTDOWN_GRACE_SECONDS: '0' }),
      /SHUTDOWN_GRACE_SECONDS must be an integer from 1/,
    );
  });
});

function pickStop({ shutdownDrainSeconds, shutdownGraceSeconds }: Config) {
  return { shutdownDrainSeconds, shutdownGraceSeconds };
}
