// The SDK's SSE helper over a real HTTP stream: events split across arbitrary chunks arrive whole and in order,
// a refusal (problem+json) is an error that carries the problem, and breaking out of the loop closes the stream.
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { sseEvents, StreamRefusedError, type EventSourceMessage } from '../../sdk/index.ts';

const STREAM =
  ': keep-alive comment\n\nevent: delta\nid: 1\ndata: {"text":"Hel"}\n\nevent: delta\nid: 2\ndata: {"text":"lo"}\n\ndata: line one\ndata: line two\n\nevent: done\ndata: {}\n\n';

describe('SDK: sseEvents', () => {
  let server: Server;
  let baseUrl: string;
  let closedEarly: Promise<void>;

  before(async () => {
    let onEarlyClose: () => void;
    closedEarly = new Promise((resolve) => (onEarlyClose = resolve));
    // oxlint-disable-next-line typescript/no-misused-promises -- the handler cannot reject: it only writes and sleeps
    server = createServer(async (req, res) => {
      if (req.url === '/refuse') {
        res
          .writeHead(429, { 'Content-Type': 'application/problem+json' })
          .end(JSON.stringify({ status: 429, code: 'rate_limited', detail: 'Wait a minute.' }));
        return;
      }
      if (req.url === '/endless') {
        res.on('close', () => onEarlyClose());
        stream(res);
        for (let i = 0; !res.destroyed && i < 1000; i++) {
          res.write(`data: ${i}\n\n`);
          await sleep(10);
        }
        return;
      }
      stream(res);
      // Seven-byte chunks cut events, fields and even the JSON apart.
      for (let i = 0; i < STREAM.length; i += 7) {
        res.write(STREAM.slice(i, i + 7));
        await sleep(2);
      }
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => (server.closeAllConnections(), server.close()));

  it('yields every event whole and in order, with event names, ids and multi-line data', async () => {
    const events: EventSourceMessage[] = [];
    for await (const event of sseEvents(await fetch(`${baseUrl}/chat`))) events.push(event);
    assert.deepEqual(
      events.map(({ event, id, data }) => ({ event, id, data })),
      [
        { event: 'delta', id: '1', data: '{"text":"Hel"}' },
        { event: 'delta', id: '2', data: '{"text":"lo"}' },
        { event: undefined, id: undefined, data: 'line one\nline two' },
        { event: 'done', id: undefined, data: '{}' },
      ],
    );
  });

  it('throws StreamRefusedError with the problem when the answer is not an event stream', async () => {
    await assert.rejects(
      async () => {
        for await (const _ of sseEvents(await fetch(`${baseUrl}/refuse`))) assert.fail('no event expected');
      },
      (error: unknown) =>
        error instanceof StreamRefusedError &&
        error.status === 429 &&
        (error.body as { code: string }).code === 'rate_limited' &&
        /Wait a minute/.test(error.message),
    );
  });

  it('closes the connection when the caller stops reading', async () => {
    const seen: string[] = [];
    for await (const event of sseEvents(await fetch(`${baseUrl}/endless`))) if (seen.push(event.data) === 3) break;
    assert.deepEqual(seen, ['0', '1', '2']);
    await closedEarly; // the server saw the client go away (the test times out otherwise)
  });
});

function stream(res: ServerResponse) {
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache, no-transform' });
}
