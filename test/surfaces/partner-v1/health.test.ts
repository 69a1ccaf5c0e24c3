import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { partnerApp } from '../../support/partner-app.ts';

const specVersion = JSON.parse(
  readFileSync(new URL('../../../generated/partner-v1/openapi.json', import.meta.url), 'utf8'),
).info.version;

describe('getHealth', () => {
  it('reports ok, the contract version and the calling key by prefix and limits', async () => {
    const { api, key, record } = await partnerApp({ keyLimits: { per_minute: 77, per_day: 7777 } });
    const res = await api.get('/api/v1/health').set('X-Service-API-Key', key).expect(200);
    assert.deepEqual(res.body, {
      status: 'ok',
      version: specVersion,
      your_key: record.prefix,
      rate_limit_per_min: 77,
      rate_limit_per_day: 7777,
    });
    assert.ok(
      key.startsWith(res.body.your_key) && res.body.your_key.length < key.length,
      'only a prefix of the key is echoed',
    );
    assert.match(String(res.headers['ratelimit']), /"minute"; r=76; t=\d+, "day"; r=7776; t=\d+/);
    assert.match(String(res.headers['ratelimit-policy']), /"minute"; q=77; w=60;.*"day"; q=7777; w=86400/);
  });

  it('accepts the key as Authorization: Bearer', async () => {
    const { api, key } = await partnerApp();
    await api.get('/api/v1/health').set('Authorization', `Bearer ${key}`).expect(200);
  });

  it('needs a key, even for health', async () => {
    const { api } = await partnerApp();
    const res = await api.get('/api/v1/health').expect(401);
    assert.equal(res.body.code, 'unauthorized');
    assert.match(String(res.headers['www-authenticate']), /^Bearer realm="partner-v1"/);
    assert.match(res.body.detail, /needs an API key/);
  });

  it('refuses a method other than GET with 405 and Allow', async () => {
    const { api, key } = await partnerApp();
    const res = await api.post('/api/v1/health').set('X-Service-API-Key', key).send({}).expect(405);
    assert.equal(res.headers['allow'], 'GET, HEAD');
    assert.equal(res.body.code, 'method_not_allowed');
  });
});
