import { setPlan } from '../../../db/queries/users.ts';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import supertest from 'supertest';
import { insertPersonalKey } from '../../../db/queries/personal-api-keys.ts';
import { insertWithFreshKey } from '../../../server/auth/api-keys.ts';
import * as avatarHttpsOnly from '../../../db/migrations/20261123_0001_avatar_https_only.ts';
import { generalApp } from '../../support/general-app.ts';
import { describeIdempotentCreate } from '../../support/idempotent-create.ts';
import { partnerApp } from '../../support/partner-app.ts';
import { rolledBack } from '../../support/query-fixture.ts';

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
    const forged = await api
      .get('/api/users/me')
      .set('authorization', 'Bearer eyJhbGciOiJFUzI1NiJ9.e30.c2ln')
      .expect(401);
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

describe('updateMyProfile', () => {
  it('changes the fields sent, leaves the others, and the partner public profile shows the same values', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const nickname = `${alice.nickname}_x`.slice(0, 30);
    const res = await api
      .patch('/api/users/me')
      .set(alice.headers)
      .send({ bio: 'Finals in June', nickname, time_zone: 'Europe/Berlin', country_code: null })
      .expect(200);
    assert.equal(res.body.bio, 'Finals in June');
    assert.equal(res.body.first_name, 'Test');
    assert.equal(res.body.time_zone, 'Europe/Berlin');
    const partner = await partnerApp();
    const publicProfile = await partner.api
      .get(`/api/v1/users/${nickname}/public`)
      .set('x-service-api-key', partner.key)
      .expect(200);
    for (const field of ['nickname', 'first_name', 'avatar_url', 'bio', 'xp', 'premium_tier', 'joined_at'] as const) {
      assert.deepEqual(publicProfile.body[field], res.body[field], field);
    }
  });

  it('answers 409 for a taken nickname, 400 for an empty body, an unknown university or time zone', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const bob = await newStudent();
    assert.equal(
      (await api.patch('/api/users/me').set(bob.headers).send({ nickname: alice.nickname }).expect(409)).body.code,
      'conflict',
    );
    await api.patch('/api/users/me').set(bob.headers).send({}).expect(400);
    await api
      .patch('/api/users/me')
      .set(bob.headers)
      .send({ university_id: '00000000-0000-4000-8000-000000000000' })
      .expect(400);
    await api.patch('/api/users/me').set(bob.headers).send({ time_zone: 'Not/AZone' }).expect(400);
  });

  it('takes only https avatar URLs, so partners are never served a javascript: or file: link', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    for (const avatar_url of [
      'javascript:alert(1)',
      'vbscript:msgbox(1)',
      'file:///etc/passwd',
      'data:image/png;base64,AAAA',
      'http://cdn.example/a.png',
      'https://',
    ]) {
      const res = await api.patch('/api/users/me').set(alice.headers).send({ avatar_url }).expect(400);
      assert.ok(
        res.body.errors.every((e: { path: string }) => e.path === 'requestBody.avatar_url'),
        avatar_url,
      );
    }
    const set = await api
      .patch('/api/users/me')
      .set(alice.headers)
      .send({ avatar_url: 'https://cdn.example/a.png' })
      .expect(200);
    assert.equal(set.body.avatar_url, 'https://cdn.example/a.png');
    assert.equal(
      (await api.patch('/api/users/me').set(alice.headers).send({ avatar_url: null }).expect(200)).body.avatar_url,
      null,
    );
  });

  it('clears stored avatars of another scheme (migration) and lets the database store none again', async () => {
    const { db, newStudent } = await generalApp();
    const alice = await newStudent();
    const store = (trx: typeof db, avatar_url: string) =>
      trx.updateTable('users').set({ avatar_url }).where('id', '=', alice.id).execute();
    await assert.rejects(store(db, 'javascript:alert(1)'), /users_avatar_url_https/);
    const migrated = await rolledBack(db, async (trx) => {
      // The state before the migration: no check, a hostile avatar stored.
      await sql`alter table users drop constraint users_avatar_url_https`.execute(trx);
      await store(trx, 'javascript:alert(1)');
      await avatarHttpsOnly.up(trx);
      return trx.selectFrom('users').select('avatar_url').where('id', '=', alice.id).executeTakeFirstOrThrow();
    });
    assert.equal(migrated.avatar_url, null);
  });

  it('needs profile:write', async () => {
    const { api, newStudent } = await generalApp();
    const reader = await newStudent({ scopes: ['profile:read'] });
    assert.equal(
      (await api.patch('/api/users/me').set(reader.headers).send({ bio: 'x' }).expect(403)).body.code,
      'insufficient_scope',
    );
  });
});

describe('plans and limits', () => {
  it('gives a contractual account its own limits, in a pool of its own', async () => {
    const { api, db, newStudent } = await generalApp();
    const corp = await newStudent();
    await setPlan(
      db,
      corp.id,
      { plan: 'contract', contract_per_minute: 5000, contract_per_day: 2_000_000, contract_ai_per_hour: 1000 },
      new Date(),
    );
    const res = await api.get('/api/users/me').set(corp.headers).expect(200);
    assert.deepEqual(res.body.limits, { per_minute: 5000, per_day: 2_000_000, ai_per_hour: 1000 });
    assert.match(String(res.headers['ratelimit-policy']), /"minute"; q=5000;/);
  });

  it('refuses the 61st request of a minute on the free plan with 429, Retry-After and RateLimit headers', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    for (let i = 0; i < 60; i++) await api.get('/api/users/me').set(alice.headers).expect(200);
    const res = await api.get('/api/users/me').set(alice.headers).expect(429);
    assert.equal(res.body.code, 'rate_limited');
    assert.match(res.body.detail, /per-minute limit of this account \(60 requests\)/);
    assert.ok(Number(res.headers['retry-after']) > 0);
    assert.match(String(res.headers.ratelimit), /"minute"; r=0;/);
  });
});

const KEYS = '/api/users/me/api-keys';

describe('listMyApiKeys / createMyApiKey / revokeMyApiKey', () => {
  it('creates a key shown once, which then acts for the student through either header, and lists it without the key', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const created = await api
      .post('/api/users/me/api-keys')
      .set(alice.headers)
      .send({ name: 'scripts', scopes: ['profile:read'] })
      .expect(201);
    assert.match(created.body.key, /^svc_live_/);
    assert.deepEqual(created.body.scopes, ['profile:read']);
    const viaHeader = await api.get('/api/users/me').set('x-service-api-key', created.body.key).expect(200);
    assert.equal(viaHeader.body.id, alice.id);
    await api.get('/api/users/me').set('authorization', `Bearer ${created.body.key}`).expect(200);
    const listed = await api.get('/api/users/me/api-keys').set(alice.headers).expect(200);
    assert.deepEqual(
      listed.body.data.map((k: { id: string }) => k.id),
      [created.body.id],
    );
    assert.equal(JSON.stringify(listed.body).includes(created.body.key), false);
  });

  it('gives a key only the scopes asked for (403 beyond them), never more than the creating credential has', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const created = await api
      .post('/api/users/me/api-keys')
      .set(alice.headers)
      .send({ name: 'read only', scopes: ['profile:read'] })
      .expect(201);
    await api.patch('/api/users/me').set('x-service-api-key', created.body.key).send({ bio: 'x' }).expect(403);
    const narrow = await newStudent({ scopes: ['keys:manage', 'profile:read'] });
    const refused = await api
      .post('/api/users/me/api-keys')
      .set(narrow.headers)
      .send({ name: 'wider', scopes: ['tasks:write'] })
      .expect(403);
    assert.equal(refused.body.code, 'insufficient_scope');
    const defaulted = await api
      .post('/api/users/me/api-keys')
      .set(narrow.headers)
      .send({ name: 'default' })
      .expect(201);
    assert.deepEqual(
      defaulted.body.scopes,
      ['profile:read'],
      'by default a key has the creator’s scopes except keys:manage',
    );
  });

  it('ends the keys an app minted through its grant, and the keys those keys minted, when the grant is revoked', async () => {
    const { api, app, db, newStudent } = await generalApp();
    const alice = await newStudent();
    const minted = (
      await api
        .post('/api/users/me/api-keys')
        .set(alice.headers)
        .send({ name: 'by app', scopes: ['profile:read', 'keys:manage'] })
        .expect(201)
    ).body;
    const byKey = (
      await api
        .post('/api/users/me/api-keys')
        .set('x-service-api-key', minted.key)
        .send({ name: 'by key', scopes: ['profile:read'] })
        .expect(201)
    ).body;
    // A key made outside OAuth (the CLI, the demo student) belongs to no grant.
    const own = await insertWithFreshKey(({ prefix, hash }) =>
      insertPersonalKey(db, {
        user_id: alice.id,
        prefix,
        key_hash: hash,
        name: 'own',
        scopes: ['profile:read', 'keys:manage'],
      }),
    );
    await api.get('/api/users/me').set('x-service-api-key', minted.key).expect(200);

    const { client_id } = JSON.parse(Buffer.from(alice.token.split('.')[1]!, 'base64url').toString());
    await supertest(app).post('/oauth/revoke').type('form').send({ client_id, token: alice.refresh_token }).expect(200);
    for (const key of [minted.key, byKey.key]) await api.get('/api/users/me').set('x-service-api-key', key).expect(401);
    await api.get('/api/users/me').set('x-service-api-key', own.key).expect(200);
    const listed = await api.get('/api/users/me/api-keys').set('x-service-api-key', own.key).expect(200);
    assert.deepEqual(
      listed.body.data.map((k: { id: string }) => k.id),
      [own.record.id],
    );
  });

  it('revokes a key at once; another student’s key id answers 404 and stays active', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const bob = await newStudent();
    const key = (await api.post('/api/users/me/api-keys').set(alice.headers).send({ name: 'k' }).expect(201)).body;
    await api.delete(`/api/users/me/api-keys/${key.id}`).set(bob.headers).expect(404);
    await api.get('/api/users/me').set('x-service-api-key', key.key).expect(200);
    await api.delete(`/api/users/me/api-keys/${key.id}`).set(alice.headers).expect(204);
    const after = await api.get('/api/users/me').set('x-service-api-key', key.key).expect(401);
    assert.match(String(after.headers['www-authenticate']), /invalid_token/);
    await api.delete(`/api/users/me/api-keys/${key.id}`).set(alice.headers).expect(404);
    assert.deepEqual((await api.get('/api/users/me/api-keys').set(alice.headers).expect(200)).body.data, []);
  });

  it('does not accept a personal key on the partner surface, nor a partner key on the general surface, and says which key it is', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const personal = (await api.post('/api/users/me/api-keys').set(alice.headers).send({ name: 'k' }).expect(201)).body
      .key;
    const partner = await partnerApp();
    for (const header of ['x-service-api-key', 'authorization'] as const) {
      const value = (key: string) => (header === 'authorization' ? `Bearer ${key}` : key);
      const onPartner = await partner.api.get('/api/v1/health').set(header, value(personal)).expect(401);
      assert.match(onPartner.body.detail, /personal API key: it works on the general surface/);
      const onGeneral = await api.get('/api/users/me').set(header, value(partner.key)).expect(401);
      assert.match(onGeneral.body.detail, /partner API key: it works on the partner API \(\/api\/v1\/\.\.\.\) only/);
    }
    // An unknown key still gets the generic detail: the hint needs a key that exists.
    const unknown = await api
      .get('/api/users/me')
      .set('x-service-api-key', `svc_live_${'x'.repeat(32)}`)
      .expect(401);
    assert.doesNotMatch(unknown.body.detail, /partner/);
  });

  it('needs keys:manage', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent({ scopes: ['profile:read'] });
    await api.get('/api/users/me/api-keys').set(alice.headers).expect(403);
    await api.post('/api/users/me/api-keys').set(alice.headers).send({ name: 'k' }).expect(403);
    await api.delete('/api/users/me/api-keys/00000000-0000-4000-8000-000000000000').set(alice.headers).expect(403);
  });

  it('answers 400 for a malformed key id and an unknown scope', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    await api.delete('/api/users/me/api-keys/not-a-uuid').set(alice.headers).expect(400);
    await api
      .post('/api/users/me/api-keys')
      .set(alice.headers)
      .send({ name: 'k', scopes: ['root'] })
      .expect(400);
  });

  it('answers a retried Idempotency-Key with the same working key, kept for the retry only sealed', async () => {
    const { api, newStudent, db } = await generalApp();
    const alice = await newStudent();
    const send = () => api.post(KEYS).set(alice.headers).set('Idempotency-Key', 'k1').send({ name: 'pc' }).expect(201);
    const first = await send();
    const retry = await send();
    assert.equal(retry.body.key, first.body.key);
    assert.equal(retry.headers['cache-control'], 'no-store');
    await api.get('/api/users/me').set('x-service-api-key', retry.body.key).expect(200);
    const stored = db.selectFrom('idempotency_keys').select('response_body').where('user_id', '=', alice.id);
    const kept = JSON.stringify((await stored.executeTakeFirstOrThrow()).response_body);
    assert.equal(kept.includes(first.body.key), false, 'the key is not kept in the clear');
    assert.equal(kept.includes(first.body.key.slice('svc_live_'.length)), false);
  });

  describeIdempotentCreate({
    prepare: async () => KEYS,
    body: { name: 'scripts', scopes: ['profile:read'] },
    otherBody: { name: 'scripts', scopes: ['tasks:read'] },
    count: async (api, student) => (await api.get(KEYS).set(student.headers).expect(200)).body.data.length,
  });
});
