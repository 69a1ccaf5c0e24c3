// An event stream answers `Connection` as Node answers any response: `close` to a request that asked for it, so a
// client pooling connections does not send its next request on a socket the server will not read again (that request
// got Node's bare 400, which Prism's proxy reported as an empty response). Both kinds of stream are opened: the live
// streams (services/streams/live-stream.ts) and the tutor's reply (handlers/general/ai-reply-stream.ts).
import assert from 'node:assert/strict';
import { request, type IncomingHttpHeaders } from 'node:http';
import { localTutor } from '../../services/ai/tutor/local.ts';
import { newStudent } from '../support/general-app.ts';
import { listeningApp } from '../support/listening.ts';

/** The status and headers of one request sent on a connection of its own, once its response (the stream) ended. */
function send(url: string, method: string, headers: Record<string, string>, body?: object) {
  return new Promise<{ status: number; headers: IncomingHttpHeaders }>((resolve, reject) => {
    const req = request(url, { method, headers, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

describe('event streams and Connection', () => {
  const streams = [
    { name: 'a live stream', method: 'GET', path: '/api/exams/readiness/stream', body: undefined },
    { name: "the tutor's reply", method: 'POST', path: '/api/ai/chat', body: { message: 'What is osmosis?' } },
  ];
  for (const { name, method, path, body } of streams) {
    it(`${name}: Connection: close is answered close, and keep-alive keep-alive`, async () => {
      const server = await listeningApp({ tutor: localTutor({ pauseMs: 0 }) });
      try {
        const student = await newStudent(server.app);
        const headers = { ...student.headers, 'Content-Type': 'application/json' };
        const closing = await send(server.baseUrl + path, method, { ...headers, Connection: 'close' }, body);
        assert.equal(closing.status, 200);
        assert.match(String(closing.headers['content-type']), /^text\/event-stream/);
        assert.equal(closing.headers.connection, 'close');
        const kept = await send(server.baseUrl + path, method, { ...headers, Connection: 'keep-alive' }, body);
        assert.equal(kept.status, 200);
        assert.equal(kept.headers.connection, 'keep-alive');
      } finally {
        await server.close();
      }
    });
  }
});
