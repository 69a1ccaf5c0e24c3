// closeGracefully, on a real HTTP server: a request in flight finishes, new connections are refused, and a
// request that outlives the grace period is cut off.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { closeGracefully } from '../../server/shutdown.ts';

function slowServer(delayMs: number) {
  const app = express();
  let started!: () => void;
  const requestStarted = new Promise<void>((resolve) => (started = resolve));
  app.get('/slow', (_req, res) => {
    started();
    setTimeout(() => res.json({ done: true }), delayMs);
  });
  const server = app.listen(0, '127.0.0.1');
  const url = () => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { server, url, requestStarted, listening: new Promise((resolve) => server.once('listening', resolve)) };
}

describe('closeGracefully', () => {
  it('lets a request in flight finish and refuses new connections', async () => {
    const { server, url, requestStarted, listening } = slowServer(300);
    await listening;
    const base = url();
    const inFlight = fetch(`${base}/slow`);
    await requestStarted;
    const closed = closeGracefully(server, 5000);
    const response = await inFlight;
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { done: true });
    await closed;
    await assert.rejects(fetch(`${base}/slow`), 'new connections are refused once closed');
  });

  it('cuts off a request that outlives the grace period', async () => {
    const { server, url, requestStarted, listening } = slowServer(10_000);
    await listening;
    const inFlight = fetch(`${url()}/slow`);
    await requestStarted;
    const started = Date.now();
    await closeGracefully(server, 200);
    await assert.rejects(inFlight);
    assert.ok(Date.now() - started < 5000, 'closed after the grace period, not after the request');
  });
});
