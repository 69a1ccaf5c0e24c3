// The request line: pino's standard req/res fields, with every header that carries a credential censored, in the
// line and in `req.log`'s binding, and the request's own headers left as they were; request lines written in batches.
import assert from 'node:assert/strict';
import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import supertest from 'supertest';
import { createServer } from 'node:http';
import { PassThrough } from 'node:stream';
import { pino } from 'pino';
import { batchedLines, createLogger, requestLogging, terminalLines } from '../../server/process/logger.ts';

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
      for (const name of ['authorization', 'x-service-api-key', 'cookie'])
        assert.equal(req.headers[name], '[redacted]', name);
    }
    assert.equal(line!.res.statusCode, 302);
    assert.equal(line!.res.headers['x-request-id'], 'censor-1');
    assert.equal(line!.res.headers['set-cookie'], '[redacted]');
    assert.equal(line!.res.headers.location, '[redacted]');
    assert.equal(typeof line!.responseTime, 'number');
    assert.ok(!JSON.stringify(lines).includes('secret'), 'no credential in any line');
  });

  it('leaves out the headers every response carries with the same value, and logs one set to another value', async () => {
    const lines: Array<Record<string, any>> = [];
    const logger = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) });
    const app = express();
    const sameOnEveryResponse = [
      ['X-Frame-Options', 'SAMEORIGIN'],
      ['Content-Security-Policy', "default-src 'self'"],
    ] as const;
    app.use(requestLogging(logger, { sameOnEveryResponse }));
    app.use((_req, res, next) => {
      for (const [name, value] of sameOnEveryResponse) res.setHeader(name, value);
      next();
    });
    app.get('/page', (_req, res) => void res.setHeader('Content-Security-Policy', "form-action 'self'").json({}));
    app.get('/', (_req, res) => void res.json({}));
    await supertest(app).get('/').expect(200);
    await supertest(app).get('/page').expect(200);
    await new Promise((resolve) => setImmediate(resolve));
    const [plain, page] = lines.map((line) => line.res.headers);
    assert.equal(plain['x-frame-options'], undefined);
    assert.equal(plain['content-security-policy'], undefined);
    assert.match(plain['content-type'], /application\/json/, 'the other headers are logged');
    assert.equal(page['x-frame-options'], undefined);
    assert.equal(page['content-security-policy'], "form-action 'self'");
  });

  it("carries pino's standard request fields, on Express's request and on Node's own", async () => {
    for (const kind of ['express', 'node'] as const) {
      const lines: Array<Record<string, any>> = [];
      const logging = requestLogging(
        createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) }),
      );
      let expected: Record<string, unknown> | undefined;
      const handle = (req: any, res: any) => {
        expected = JSON.parse(JSON.stringify(pino.stdSerializers.req(req)));
        res.end('{}');
      };
      const server =
        kind === 'express'
          ? express().use(logging).get('/list', handle)
          : createServer((req, res) => logging(req, res, () => handle(req, res)));
      await supertest(server)
        .get('/list?page=2&x=%20')
        .set('X-Request-Id', `std-${kind}`)
        .set('Authorization', 'Bearer t')
        .expect(200);
      await new Promise((resolve) => setImmediate(resolve));
      const logged = lines.at(-1)!.req;
      assert.equal(logged.headers.authorization, '[redacted]');
      assert.deepEqual({ ...logged, headers: { ...logged.headers, authorization: 'Bearer t' } }, expected, kind);
    }
  });

  it('adds no censored header the request did not send', async () => {
    const { app, lines } = loggedApp();
    await supertest(app).get('/').set('X-Service-API-Key', 'svc_live_secret').expect(302);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(lines[1]!.req.headers.authorization, undefined, 'an absent header is not added');
  });
});

describe('batchedLines', () => {
  it('holds request lines until another line is written, and keeps the order', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'batched-lines-'));
    const file = join(dir, 'log');
    const fd = openSync(file, 'w');
    try {
      const logger = createLogger('info', batchedLines(fd));
      const app = express();
      app.use(requestLogging(logger));
      app.get('/', (_req, res) => void res.json({}));
      logger.info('first');
      await until(() => readFileSync(file, 'utf8').includes('"first"'));
      for (let i = 0; i < 3; i++) await supertest(app).get('/').set('X-Request-Id', `held-${i}`).expect(200);
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.doesNotMatch(readFileSync(file, 'utf8'), /held-/, 'request lines are held');
      logger.warn('second');
      await until(() => readFileSync(file, 'utf8').includes('"second"'));
      const messages = readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { msg: string; req?: { id: string } });
      assert.deepEqual(
        messages.map((m) => m.req?.id ?? m.msg),
        ['first', 'held-0', 'held-1', 'held-2', 'second'],
      );
    } finally {
      // The fd stays open: the destination's timer flushes on it for as long as the process runs.
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('batchedLines, when no other line comes', () => {
  it('writes the request lines it holds within a second', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'batched-lines-'));
    const file = join(dir, 'log');
    const fd = openSync(file, 'w'); // stays open: the destination's timer flushes on it for as long as the process runs
    try {
      const app = express();
      app.use(requestLogging(createLogger('info', batchedLines(fd))));
      app.get('/', (_req, res) => void res.json({}));
      await supertest(app).get('/').set('X-Request-Id', 'timed-0').expect(200);
      await until(() => readFileSync(file, 'utf8').includes('timed-0'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 2_000;
  while (!condition()) {
    assert.ok(Date.now() < deadline, 'not written within 2 s');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('terminal lines', () => {
  it('prints a request as one short line (method, path, status, time), and every other entry on one line too', async () => {
    const out = new PassThrough();
    let text = '';
    out.on('data', (chunk: Buffer) => (text += chunk.toString()));
    const logger = createLogger('info', terminalLines(out));
    const app = express();
    app.use(requestLogging(logger));
    app.get('/api/tasks', (req, res) => {
      req.log.warn({ detail: 'x' }, 'inside the handler');
      res.json([]);
    });
    await supertest(app).get('/api/tasks?limit=5').set('authorization', 'Bearer secret-token').expect(200);
    logger.info({ port: 3000, sharedLimits: false }, 'listening');
    await new Promise((resolve) => setImmediate(resolve));
    const lines = text.trimEnd().split('\n');
    assert.equal(lines.length, 3, text);
    assert.match(lines[0]!, /WARN.*inside the handler \(GET \/api\/tasks\?limit=5\).*"detail":"x"/);
    assert.match(lines[1]!, /INFO.*GET \/api\/tasks\?limit=5 200 \d+ ms$/);
    assert.match(lines[2]!, /INFO.*listening.*"port":3000/);
    assert.doesNotMatch(text, /secret-token|authorization|headers/i, 'no header reaches the terminal line');
  });
});
