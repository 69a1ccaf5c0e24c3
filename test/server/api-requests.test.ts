// The API surfaces' requests without Express (server/http/api-requests.ts): the steps in front run in order and may
// answer, a step that throws is answered as an error instead of taking the process down, the longest prefix picks the
// surface, and only methods with a meaningful body have it parsed.
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import express from 'express';
import supertest from 'supertest';
import { apiRequests, type ApiRequestsOptions } from '../../server/http/api-requests.ts';

type Step = ApiRequestsOptions['prepare'][number];

function served(prepare: Step[] = []) {
  const seen: string[] = [];
  const surface = (name: string) => async (req: IncomingMessage, res: ServerResponse) => {
    seen.push(name);
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ surface: name, body: (req as { body?: unknown }).body ?? null }));
  };
  const handle = apiRequests({
    prepare,
    parseBody: express.json(),
    surfaces: [
      { prefix: '/api/v1', serve: surface('partner') },
      { prefix: '/api', serve: surface('general') },
    ],
    renderError: (error, _req, res) => {
      res.statusCode = 500;
      res.end(`rendered: ${error instanceof Error ? error.message : String(error)}`);
    },
  });
  const api = supertest((req: IncomingMessage, res: ServerResponse) =>
    handle(req, res, (req.url ?? '/').split('?')[0]!),
  );
  return { api, seen };
}

describe('API requests without Express', () => {
  it('sends each path to the surface of the longest prefix it is under', async () => {
    const { api } = served();
    assert.equal((await api.get('/api/v1/health').expect(200)).body.surface, 'partner');
    assert.equal((await api.get('/api/v1').expect(200)).body.surface, 'partner');
    assert.equal((await api.get('/api/v10/health').expect(200)).body.surface, 'general');
    assert.equal((await api.get('/api/tasks?limit=2').expect(200)).body.surface, 'general');
  });

  it('runs the steps in order, and a step that answers ends the request there', async () => {
    const order: string[] = [];
    const { api, seen } = served([
      (_req, _res, next) => (order.push('first'), next()),
      (req, res, next) => {
        order.push('second');
        if (req.headers['x-refuse']) return void res.writeHead(413).end();
        next();
      },
    ]);
    await api.get('/api/tasks').expect(200);
    await api.get('/api/tasks').set('X-Refuse', '1').expect(413);
    assert.deepEqual(order, ['first', 'second', 'first', 'second']);
    assert.deepEqual(seen, ['general']);
  });

  it('answers a step that throws as an error, and keeps serving', async () => {
    const { api } = served([
      (req, _res, next) => {
        if (req.headers['x-throw']) throw new Error('a step failed');
        next();
      },
    ]);
    assert.equal((await api.get('/api/tasks').set('X-Throw', '1').expect(500)).text, 'rendered: a step failed');
    await api.get('/api/tasks').expect(200);
  });

  it('parses the body of POST, PUT and PATCH only, and renders a malformed one as an error', async () => {
    const { api } = served();
    assert.deepEqual((await api.post('/api/tasks').send({ title: 'a' }).expect(200)).body.body, { title: 'a' });
    assert.deepEqual((await api.patch('/api/tasks/1').send({ title: 'b' }).expect(200)).body.body, { title: 'b' });
    assert.equal(
      (await api.delete('/api/tasks/1').set('Content-Type', 'application/json').send('{"x":1}').expect(200)).body.body,
      null,
    );
    const malformed = await api
      .post('/api/tasks')
      .set('Content-Type', 'application/json')
      .send('{"title":')
      .expect(500);
    assert.match(malformed.text, /^rendered: /);
  });
});
