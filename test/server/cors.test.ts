// Cross-origin access (CORS_ORIGINS, server/http/cors.ts): a page of a listed origin (the docs served elsewhere) may
// preflight and call the API surfaces and read the headers a client needs; any other origin, or any origin without the
// setting, gets no Access-Control-Allow-Origin, so the browser keeps the response from the page.
import assert from 'node:assert/strict';
import supertest from 'supertest';
import { loadConfig } from '../../app/config.ts';
import { bundledSpecs } from '../../server/contract/bundled-specs.ts';
import { CORS_EXPOSED_HEADERS } from '../../server/http/cors.ts';
import { ConfigError } from '../../server/process/config-error.ts';
import { contractClient } from '../support/contract.ts';
import { buildApp, issueTestKey } from '../support/partner-app.ts';

const DOCS = 'https://docs.example.com';
const OTHER = 'https://elsewhere.example';

function preflight(app: Parameters<typeof supertest>[0], path: string, origin: string, method = 'GET') {
  return supertest(app)
    .options(path)
    .set('Origin', origin)
    .set('Access-Control-Request-Method', method)
    .set('Access-Control-Request-Headers', 'x-service-api-key');
}

describe('CORS on the API surfaces', () => {
  it('answers a preflight from a listed origin with 204, the path’s methods and the API’s request headers', async () => {
    const app = await buildApp({ corsOrigins: [DOCS, 'http://localhost:8080'] });
    const partner = await preflight(app, '/api/v1/universities', DOCS).expect(204);
    assert.equal(partner.headers['access-control-allow-origin'], DOCS);
    assert.match(partner.headers.vary ?? '', /\bOrigin\b/);
    assert.equal(partner.headers['access-control-allow-methods'], 'GET, HEAD');
    const allowed = String(partner.headers['access-control-allow-headers']).split(', ');
    for (const header of ['Authorization', 'X-Service-API-Key', 'Content-Type', 'Idempotency-Key', 'If-None-Match'])
      assert.ok(allowed.includes(header), header);
    assert.ok(Number(partner.headers['access-control-max-age']) > 0);
    assert.equal(
      partner.headers['access-control-allow-credentials'],
      undefined,
      'credentials are headers, never cookies',
    );

    const general = await preflight(app, '/api/users/me', 'http://localhost:8080', 'PATCH').expect(204);
    assert.equal(general.headers['access-control-allow-origin'], 'http://localhost:8080');
    assert.equal(general.headers['access-control-allow-methods'], 'GET, HEAD, DELETE, PATCH');
  });

  it('gives another origin no Allow-Origin: its preflight is refused as any OPTIONS is (405)', async () => {
    const app = await buildApp({ corsOrigins: [DOCS] });
    const res = await contractClient(app)
      .options('/api/v1/universities')
      .set('Origin', OTHER)
      .set('Access-Control-Request-Method', 'GET')
      .expect(405);
    assert.equal(res.headers['access-control-allow-origin'], undefined);
    const { key } = await issueTestKey();
    const read = await contractClient(app)
      .get('/api/v1/universities')
      .set('Origin', OTHER)
      .set('X-Service-API-Key', key)
      .expect(200);
    assert.equal(read.headers['access-control-allow-origin'], undefined);
    assert.match(read.headers.vary ?? '', /\bOrigin\b/, 'a cache must not hand this answer to a listed origin');
  });

  it('lets a listed origin read a response and its rate-limit headers', async () => {
    const app = await buildApp({ corsOrigins: [DOCS] });
    const { key } = await issueTestKey();
    const res = await contractClient(app)
      .get('/api/v1/universities')
      .set('Origin', DOCS)
      .set('X-Service-API-Key', key)
      .expect(200);
    assert.equal(res.headers['access-control-allow-origin'], DOCS);
    const exposed = String(res.headers['access-control-expose-headers']).split(', ');
    for (const header of ['RateLimit', 'RateLimit-Policy', 'Retry-After', 'ETag'])
      assert.ok(exposed.includes(header), header);
    assert.equal(res.headers['access-control-allow-credentials'], undefined);
    // A refusal is readable too: the page can show why (a 401 and its problem).
    const refused = await contractClient(app).get('/api/v1/universities').set('Origin', DOCS).expect(401);
    assert.equal(refused.headers['access-control-allow-origin'], DOCS);
  });

  it('exposes every response header the specs document that a script could not read otherwise', () => {
    const safelisted = new Set([
      'cache-control',
      'content-language',
      'content-length',
      'content-type',
      'expires',
      'last-modified',
      'pragma',
    ]);
    const exposed = new Set(CORS_EXPOSED_HEADERS.map((header) => header.toLowerCase()));
    for (const { surface, definition } of bundledSpecs()) {
      const responses = [
        ...Object.values(definition.components?.responses ?? {}),
        ...Object.values(definition.paths ?? {}).flatMap((item) =>
          Object.values(item ?? {}).flatMap((op) => Object.values((op as { responses?: object }).responses ?? {})),
        ),
      ] as Array<{ headers?: Record<string, unknown> }>;
      for (const name of responses.flatMap((response) => Object.keys(response.headers ?? {}))) {
        assert.ok(
          safelisted.has(name.toLowerCase()) || exposed.has(name.toLowerCase()),
          `${surface}: ${name} is not exposed`,
        );
      }
    }
  });

  it('sends no CORS header without CORS_ORIGINS', async () => {
    const app = await buildApp();
    const res = await contractClient(app)
      .options('/api/v1/universities')
      .set('Origin', DOCS)
      .set('Access-Control-Request-Method', 'GET')
      .expect(405);
    const { key } = await issueTestKey();
    const read = await contractClient(app)
      .get('/api/v1/universities')
      .set('Origin', DOCS)
      .set('X-Service-API-Key', key)
      .expect(200);
    for (const response of [res, read]) {
      assert.deepEqual(
        Object.keys(response.headers).filter((name) => name.startsWith('access-control-')),
        [],
      );
      assert.doesNotMatch(response.headers.vary ?? '', /\bOrigin\b/);
    }
  });

  it('takes CORS_ORIGINS as exact origins only, refusing "*" and anything that is not one', () => {
    assert.deepEqual(loadConfig({}).corsOrigins, []);
    assert.deepEqual(loadConfig({ CORS_ORIGINS: `${DOCS}, http://localhost:8080` }).corsOrigins, [
      DOCS,
      'http://localhost:8080',
    ]);
    for (const bad of [
      '*',
      'not a url',
      `${DOCS}/`,
      `${DOCS}/docs`,
      'https://Docs.example.com',
      'ftp://docs.example.com',
      'null',
    ]) {
      assert.throws(
        () => loadConfig({ CORS_ORIGINS: bad }),
        (e) => e instanceof ConfigError && e.message.startsWith('CORS_ORIGINS must be') && !e.message.includes('\n'),
        bad,
      );
    }
  });
});
