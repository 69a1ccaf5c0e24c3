// Behaviour shared by every partner operation: authentication, unknown paths, limits on input, logs.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { PARTNER_KEYS_CHANNEL, revokeApiKey } from '../../../db/queries/api-keys.ts';
import { createLogger } from '../../../server/process/logger.ts';
import { contractClient } from '../../support/contract.ts';
import { buildApp, issueTestKey, partnerApp, testNotifications } from '../../support/partner-app.ts';

describe('partner surface', () => {
  it('refuses a revoked key at once', async () => {
    const { api, key, record, db } = await partnerApp();
    await api.get('/api/v1/stats').set('X-Service-API-Key', key).expect(200);
    // The key is kept in the process until the revocation's notification arrives
    // (test/surfaces/partner-v1/key-cache.test.ts).
    const delivered = new Promise<void>((resolve) => {
      const stop = testNotifications().subscribe(PARTNER_KEYS_CHANNEL, {
        message: () => (stop(), resolve()),
        missed: () => {},
      });
    });
    assert.equal(await revokeApiKey(db, record.prefix), true);
    await delivered;
    const res = await api.get('/api/v1/stats').set('X-Service-API-Key', key).expect(401);
    assert.match(res.body.detail, /unknown or revoked/);
  });

  for (const [header, value] of [
    ['X-Service-API-Key', 'not-a-key'],
    ['X-Service-API-Key', ''],
    ['Authorization', 'Basic dXNlcjpwYXNz'],
    ['Authorization', 'Bearer'],
    ['Authorization', 'Bearer svc_live_short'],
  ] as const) {
    it(`answers 401 problem+json to ${header}: "${value}"`, async () => {
      const { api } = await partnerApp();
      const res = await api.get('/api/v1/universities').set(header, value).expect(401);
      assert.equal(res.body.code, 'unauthorized');
    });
  }

  it('answers 404 problem+json for a path the spec does not have', async () => {
    const { api, key } = await partnerApp();
    for (const path of ['/api/v1/nope', '/api/v1/universities/x/y', '/api/v2/health', '/nope']) {
      const res = await api.get(path).set('X-Service-API-Key', key).expect(404);
      assert.equal(res.body.code, 'not_found', path);
    }
  });

  it('never answers 5xx to malformed paths and parameters', async () => {
    const { api, key } = await partnerApp();
    for (const path of [
      '/api/v1/users/%ZZ/public',
      '/api/v1/users/%00/public',
      '/api/v1/universities?limit[]=1',
      '/api/v1/universities?limit=%FF',
      '/api/v1/holidays/%E2%82%AC',
    ]) {
      const res = await api.get(path).set('X-Service-API-Key', key);
      assert.ok(res.status >= 400 && res.status < 500, `${path} answered ${res.status}`);
    }
  });

  it('refuses a request body over the limit with 413 before reading it', async () => {
    const { api, key } = await partnerApp();
    const res = await api
      .get('/api/v1/health')
      .set('X-Service-API-Key', key)
      .set('Content-Type', 'application/json')
      .send('x'.repeat(200 * 1024))
      .expect(413);
    assert.equal(res.body.code, 'payload_too_large');
  });

  it('echoes a sane X-Request-Id and replaces an unusable one', async () => {
    const { api, key } = await partnerApp();
    const echoed = await api
      .get('/api/v1/health')
      .set('X-Service-API-Key', key)
      .set('X-Request-Id', 'trace-123')
      .expect(200);
    assert.equal(echoed.headers['x-request-id'], 'trace-123');
    const replaced = await api
      .get('/api/v1/health')
      .set('X-Service-API-Key', key)
      .set('X-Request-Id', 'x'.repeat(300))
      .expect(200);
    assert.match(String(replaced.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  });

  it('sends security headers', async () => {
    const { api, key } = await partnerApp();
    const res = await api.get('/api/v1/health').set('X-Service-API-Key', key).expect(200);
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    assert.equal(res.headers['x-powered-by'], undefined);
  });

  it('logs requests as JSON with their request id, and never the key', async () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) });
    const app = await buildApp({ logger: createLogger('info', sink) });
    const { key } = await issueTestKey();
    const api = contractClient(app);
    await api.get('/api/v1/health').set('X-Service-API-Key', key).set('X-Request-Id', 'log-check-1').expect(200);
    await api
      .get('/api/v1/health')
      .set('Authorization', `Bearer ${key}`)
      .set('X-Request-Id', 'log-check-2')
      .expect(200);
    const entries = lines.map((line) => JSON.parse(line));
    assert.ok(entries.some((e) => e.req?.id === 'log-check-1' && e.res?.statusCode === 200));
    assert.ok(entries.some((e) => e.req?.id === 'log-check-2'));
    const secret = key.slice('svc_live_'.length);
    assert.ok(
      lines.every((line) => !line.includes(secret)),
      'no log line contains the key',
    );
  });
});
