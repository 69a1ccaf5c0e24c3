// Requests Node's parser refuses before the app sees them get a problem document with a stable code, as every other
// error does (server/http/client-errors.ts), instead of Node's bare status line; the connection is then closed.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { listen, type Listening } from '../support/listening.ts';
import { buildApp } from '../support/partner-app.ts';

/** Writes `raw` on a new connection and resolves with everything the server sent until it closed. */
function exchange(baseUrl: string, raw: string): Promise<string> {
  const { port, hostname } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    let response = '';
    const socket = connect(Number(port), hostname, () => socket.write(raw));
    socket.on('data', (chunk) => (response += chunk.toString('latin1')));
    socket.on('end', () => resolve(response));
    socket.on('error', reject);
  });
}

function parse(response: string) {
  const [head = '', body = ''] = response.split('\r\n\r\n');
  const [statusLine = '', ...headers] = head.split('\r\n');
  return {
    status: Number(statusLine.split(' ')[1]),
    headers: Object.fromEntries(
      headers.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
    ),
    body: JSON.parse(body) as { code: string; status: number; type: string; title: string },
  };
}

describe("the parser's refusals", () => {
  let server: Listening;
  before(async () => (server = await listen(await buildApp())));
  after(() => server.close());

  it('answers a malformed request line with 400 malformed_request as problem+json, and closes the connection', async () => {
    const { status, headers, body } = parse(await exchange(server.baseUrl, 'GET /api/v1/health HTTP/9 x\r\n\r\n'));
    assert.equal(status, 400);
    assert.match(headers['content-type']!, /^application\/problem\+json/);
    assert.equal(headers.connection, 'close');
    assert.deepEqual(
      [body.code, body.status, body.type],
      ['malformed_request', 400, 'https://study-companion.example/problems#malformed_request'],
    );
  });

  it('answers a header that is not HTTP with 400 malformed_request', async () => {
    const { status, body } = parse(
      await exchange(server.baseUrl, 'GET /livez HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n'),
    );
    assert.deepEqual([status, body.code], [400, 'malformed_request']);
  });

  it('answers headers over 16 KiB with 431 headers_too_large', async () => {
    const raw = `GET /livez HTTP/1.1\r\nHost: x\r\nX-Padding: ${'a'.repeat(20 * 1024)}\r\n\r\n`;
    const { status, body } = parse(await exchange(server.baseUrl, raw));
    assert.deepEqual([status, body.code], [431, 'headers_too_large']);
  });

  it('still serves a well-formed request on the same listener', async () => {
    assert.equal((await fetch(`${server.baseUrl}/livez`)).status, 200);
  });
});
