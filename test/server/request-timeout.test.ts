// A request whose body trickles in (issue 23, item 9): with Node's defaults it held its connection for 300 s. The
// service's listener (server/http/request-timeout.ts, REQUEST_TIMEOUT_MS) cuts it off: 408 and the connection closed,
// long before the body would have arrived. Configured short here; the test counts bytes, not time.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { requestTimeoutOptions } from '../../server/http/request-timeout.ts';
import { listen } from '../support/listening.ts';
import { buildApp } from '../support/partner-app.ts';

const TIMEOUT_MS = 500;
const TRICKLE_EVERY_MS = 100;
/** Bytes the client would trickle before giving up: 40 × 100 ms, eight times the bound. */
const TRICKLE_BYTES = 40;

/** Sends the headers of a 1,000-byte body, then one byte every TRICKLE_EVERY_MS; resolves when the server closes. */
function trickle(baseUrl: string): Promise<{ sent: number; response: string }> {
  const { port, hostname } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let sent = 0;
    let response = '';
    let timer: NodeJS.Timeout | undefined;
    socket.on('connect', () => {
      socket.write(
        'POST /api/accounts HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{',
      );
      timer = setInterval(() => {
        if (sent >= TRICKLE_BYTES) return void (clearInterval(timer), socket.destroy(), resolve({ sent, response }));
        socket.write(' ');
        sent++;
      }, TRICKLE_EVERY_MS);
    });
    socket.on('data', (chunk) => (response += chunk.toString('latin1')));
    socket.on('close', () => (clearInterval(timer), resolve({ sent, response })));
    socket.on(
      'error',
      (error) => (
        clearInterval(timer),
        (error as NodeJS.ErrnoException).code === 'ECONNRESET' ? resolve({ sent, response }) : reject(error)
      ),
    );
  });
}

describe('request timeout', () => {
  it('cuts off a request whose body trickles in: 408 and the connection closed, well before the body is complete', async function () {
    this.timeout(30_000);
    const server = await listen(await buildApp(), requestTimeoutOptions(TIMEOUT_MS));
    try {
      const { sent, response } = await trickle(server.baseUrl);
      assert.ok(
        sent < TRICKLE_BYTES,
        `the server closed the connection after ${sent} of ${TRICKLE_BYTES} trickled bytes`,
      );
      assert.match(response, /^HTTP\/1\.1 408 /);
      assert.match(response, /\r\ncontent-type: application\/problem\+json/i);
      assert.equal(JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4)).code, 'request_timeout');
      // A request that arrives promptly is served as usual.
      assert.equal((await fetch(`${server.baseUrl}/livez`)).status, 200);
    } finally {
      await server.close();
    }
  });
});
