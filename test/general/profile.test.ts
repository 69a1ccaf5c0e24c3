import assert from 'node:assert/strict';
import { generalApp } from '../support/general-app.ts';

describe('getMyProfile', () => {
  it('returns the profile of the student behind the token, with the plan limits', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent({ time_zone: 'Asia/Almaty', country_code: 'kz' });
    const res = await api.get('/api/users/me').set(alice.headers).expect(200);
    assert.equal(res.body.id, alice.id);
    assert.equal(res.body.nickname, alice.nickname);
    assert.equal(res.body.time_zone, 'Asia/Almaty');
    assert.deepEqual(res.body.limits, { per_minute: 60, per_day: 10000, ai_per_hour: 20 });
    assert.match(String(res.headers['ratelimit-policy']), /"minute"; q=60;/);
  });

  it('answers 401 with WWW-Authenticate without credentials, and invalid_token for a forged one', async () => {
    const { api } = await generalApp();
    const missing = await api.get('/api/users/me').expect(401);
    assert.equal(missing.headers['www-authenticate'], 'Bearer realm="general"');
    const forged = await api.get('/api/users/me').set('authorization', 'Bearer eyJhbGciOiJFUzI1NiJ9.e30.c2ln').expect(401);
    assert.match(String(forged.headers['www-authenticate']), /error="invalid_token"/);
  });

  it('answers 403 insufficient_scope when the token lacks profile:read', async () => {
    const { api, newStudent } = await generalApp();
    const bob = await newStudent({ scopes: ['tasks:read'] });
    const res = await api.get('/api/users/me').set(bob.headers).expect(403);
    assert.equal(res.body.code, 'insufficient_scope');
    assert.match(String(res.headers['www-authenticate']), /error="insufficient_scope", scope="profile:read"/);
  });
});
