// The request line: pino's standard req/res fields, with every header that carries a credential censored, in the
// line and in `req.log`'s binding, and the request's own headers left as they were.
import assert from 'node:assert/strict';
import express from 'express';
import supertest from 'supertest';
import { createLogger, requestLogging } from '../../server/logger.ts';

function loggedApp() {
  const lines: Array<Record<string, any>> = [];
  const logger = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) });
  const app = express();
  app.use(requestLogging(logger));
  app.get('/', (req, res) => {
    req.log.info('inside the handler');
    assert.equal(req.headers['x-service-api-key'], 'svc_live_secret', 'the request keeps its own headers');
    res.setHeader('Set-Cookie', 'session=secret-cookie');
    res.redirect(302, '/callback?code=secret-code');
  });
  return { app, lines };
}

describe('requestLogging', () => {
  it('logs req and res as pino does, with the credential headers censored, in the line and in req.log', async () => {
    const { app, lines } = loggedApp();
    await supertest(app)
      .get('/?page=1')
      .set('Authorization', 'Bearer secret-token')
      .set('X-Service-API-Key', 'svc_live_secret')
      .set('Cookie', 'a=secret-cookie')
      .set('X-Request-Id', 'censor-1')
      .expect(302);
    await new Promise((resolve) => setImmediate(resolve)); // the line is written on 'close'
    const [inside, line] = lines;
    assert.equal(inside!.msg, 'inside the handler');
    assert.equal(line!.msg, 'request completed');
    for (const req of [inside!.req, line!.req]) {
      assert.equal(req.id, 'censor-1');
      assert.equal(req.method, 'GET');
      assert.equal(req.url, '/?page=1');
      assert.equal(typeof req.remoteAddress, 'string');
      assert.equal(typeof req.remotePort, 'number');
      assert.equal(req.headers['x-request-id'], 'censor-1');
      for (const name of ['authorization', 'x-service-api-key', 'cookie']) assert.equal(req.headers[name], '[redacted]', name);
    }
    assert.equal(line!.res.statusCode, 302);
    assert.equal(line!.res.headers['x-request-id'], 'censor-1');
    assert.equal(line!.res.headers['set-cookie'], '[redacted]');
    assert.equal(line!.res.headers.location, '[redacted]');
    assert.equal(typeof line!.responseTime, 'number');
    assert.ok(!JSON.stringify(lines).includes('secret'), 'no credential in any line');
  });

  it('adds no censored header the request did not send', async () => {
    const { app, lines } = loggedApp();
    await supertest(app).get('/').set('X-Service-API-Key', 'svc_live_secret').expect(302);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(lines[1]!.req.headers.authorization, undefined, 'an absent header is not added');
  });
});
