// How the surfaces treat the credentials they are sent, beyond valid and invalid: tokens whose claims have the
// wrong shapes, more than one credential in a request, and many failed ones from one address.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { accessTokenIssuer } from '../../server/auth/access-tokens.ts';
import { loadSigningKey } from '../../server/auth/signing-keys.ts';
import { AUTH_FAILURES_PER_WINDOW } from '../../server/auth/auth-failure-limit.ts';
import { redisLimitStores } from '../../server/limits/redis-limit-stores.ts';
import { contractClient } from '../support/contract.ts';
import { generalApp } from '../support/general-app.ts';
import { listen } from '../support/listening.ts';
import { buildApp, issueTestKey, partnerApp, TEST_ISSUER } from '../support/partner-app.ts';

describe('credentials on the surfaces', () => {
  describe('access tokens with claims of the wrong shape', () => {
    let sign: (claims: Record<string, unknown>) => Promise<string>;
    let api: ReturnType<typeof contractClient>;
    let sid: string;
    let sub: string;
    before(async () => {
      const key = await loadSigningKey(undefined);
      const tokens = accessTokenIssuer(key, { issuer: TEST_ISSUER, now: () => new Date() });
      const context = await generalApp();
      const app = await buildApp({ tokens });
      api = contractClient(app);
      const student = await context.newStudent();
      sub = student.id;
      sid = (
        await context.db.selectFrom('oauth_grants').select('id').where('user_id', '=', sub).executeTakeFirstOrThrow()
      ).id;
      sign = (claims) =>
        new SignJWT({ client_id: 'test', scope: 'profile:read', sid, ...claims })
          .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: key.signer().kid })
          .setIssuer(TEST_ISSUER)
          .setAudience(tokens.audience)
          .setSubject(String(claims.sub ?? sub))
          .setIssuedAt()
          .setExpirationTime('5m')
          .setJti(randomUUID())
          .sign(key.signer().privateKey);
    });

    it('accepts the well-formed token the bad ones are variations of', async () => {
      await api
        .get('/api/users/me')
        .set('authorization', `Bearer ${await sign({})}`)
        .expect(200);
    });

    for (const [what, claims] of [
      ['a scope that is an array', { scope: ['profile:read'] }],
      ['a scope that is a number', { scope: 7 }],
      ['a client_id that is an object', { client_id: { id: 'x' } }],
      ['a sub that is not a UUID', { sub: 'not-a-uuid' }],
      ['a sid that is not a UUID', { sid: 'not-a-uuid' }],
      ['a sid that is a number', { sid: 42 }],
    ] as const) {
      it(`answers a validly signed token with ${what} 401 invalid_token, not 500`, async () => {
        const res = await api
          .get('/api/users/me')
          .set('authorization', `Bearer ${await sign(claims)}`)
          .expect(401);
        assert.match(String(res.headers['www-authenticate']), /error="invalid_token"/);
      });
    }
  });

  describe('more than one credential (RFC 6750 §2)', () => {
    it('refuses a token and a key of different accounts with 400 invalid_request, before looking either up', async () => {
      const { api, newStudent } = await generalApp();
      const [alice, bob] = await Promise.all([newStudent(), newStudent()]);
      const bobsKey = (
        await api
          .post('/api/users/me/api-keys')
          .set(bob.headers)
          .send({ name: 'k', scopes: ['profile:read'] })
          .expect(201)
      ).body.key;
      for (const path of ['/api/users/me', '/api/users/me/api-keys', '/api/today/loop']) {
        const res = await api.get(path).set(alice.headers).set('X-Service-API-Key', bobsKey).expect(400);
        assert.equal(res.body.code, 'invalid_request');
        assert.deepEqual(
          res.body.errors.map((e: { path: string }) => e.path),
          ['header.Authorization', 'header.X-Service-API-Key'],
        );
        assert.equal(res.headers['www-authenticate'], 'Bearer realm="general", error="invalid_request"');
      }
      await api
        .post('/api/tasks')
        .set(alice.headers)
        .set('X-Service-API-Key', bobsKey)
        .send({ title: 't', due_at: '2026-12-01T10:00:00Z', course: null })
        .expect(400);
    });

    it('refuses the same key sent in both headers too: one method per request, whatever they hold', async () => {
      const { api, newStudent } = await generalApp();
      const alice = await newStudent();
      const key = (
        await api
          .post('/api/users/me/api-keys')
          .set(alice.headers)
          .send({ name: 'k', scopes: ['profile:read'] })
          .expect(201)
      ).body.key;
      await api.get('/api/users/me').set('X-Service-API-Key', key).set('Authorization', `Bearer ${key}`).expect(400);
      await api.get('/api/users/me').set('X-Service-API-Key', key).expect(200);
    });
  });

  describe('where a bearer credential is read', () => {
    it('reads it from the Authorization header only: a valid token as the body’s access_token (RFC 6750 §2.2) is no credential', async () => {
      const { api, newStudent } = await generalApp();
      const alice = await newStudent();
      const task = { title: 't', due_at: '2026-12-01T10:00:00Z', course: null };
      const res = await api
        .post('/api/tasks')
        .send({ ...task, access_token: alice.token })
        .expect(401);
      assert.equal(
        res.headers['www-authenticate'],
        'Bearer realm="general"',
        'answered as a request without a credential',
      );
      await api.post('/api/tasks').set(alice.headers).send(task).expect(201);
    });

    it('takes one or more spaces after the scheme (RFC 6750 §2.1: "Bearer" 1*SP b64token), on both surfaces', async () => {
      const { api, newStudent } = await generalApp();
      const alice = await newStudent();
      const me = await api.get('/api/users/me').set('authorization', `Bearer   ${alice.token}`).expect(200);
      assert.equal(me.body.id, alice.id);
      const partner = await partnerApp();
      await partner.api.get('/api/v1/universities').set('authorization', `Bearer  ${partner.key}`).expect(200);
      await partner.api.get('/api/v1/universities').set('authorization', `Bearerx ${partner.key}`).expect(401);
    });
  });

  describe('failed authentications per address', () => {
    /** Spends the address's whole allowance of failures (401 each), half on each surface, 50 at a time. */
    async function failEveryAllowedTime(api: ReturnType<typeof contractClient>) {
      for (let sent = 0; sent < AUTH_FAILURES_PER_WINDOW; sent += 50) {
        await Promise.all(
          Array.from({ length: 50 }, (_, i) => {
            const path = (sent + i) % 2 === 0 ? '/api/v1/health' : '/api/users/me';
            return api.get(path).set('X-Service-API-Key', 'svc_live_not_a_key').expect(401);
          }),
        );
      }
    }

    it('refuses an address with 429 after 300 failures in 5 minutes, on both surfaces, valid credentials included', async () => {
      const { app, newStudent } = await generalApp();
      const alice = await newStudent();
      const { key: partnerKey } = await issueTestKey();
      const server = await listen(app);
      try {
        const api = contractClient(server.baseUrl);
        await failEveryAllowedTime(api);
        const refused = await api.get('/api/v1/health').set('X-Service-API-Key', 'svc_live_not_a_key').expect(429);
        assert.equal(refused.body.code, 'rate_limited');
        assert.match(refused.body.detail, /failed authentications from this address \(300 requests\)/);
        assert.ok(Number(refused.headers['retry-after']) > 0);
        // Now refused before any lookup, valid credentials included, on either surface.
        await api.get('/api/v1/health').set('X-Service-API-Key', partnerKey).expect(429);
        await api.get('/api/users/me').set(alice.headers).expect(429);
        // A request without credentials costs no lookup and is answered as usual.
        await api.get('/api/users/me').expect(401);
      } finally {
        await server.close();
      }
    });

    it('counts per client address as TRUST_PROXY says: behind a trusted proxy, the address X-Forwarded-For names', async () => {
      const server = await listen(await buildApp({ trustProxy: 1 }));
      try {
        const api = contractClient(server.baseUrl);
        const from = (address: string) => ({ 'X-Forwarded-For': address, 'X-Service-API-Key': 'svc_live_not_a_key' });
        for (let sent = 0; sent < AUTH_FAILURES_PER_WINDOW; sent += 50) {
          await Promise.all(
            Array.from({ length: 50 }, () => api.get('/api/v1/health').set(from('198.51.100.7')).expect(401)),
          );
        }
        await api.get('/api/users/me').set(from('198.51.100.7')).expect(429);
        // Another client behind the same proxy (the same socket address) keeps its own allowance.
        await api.get('/api/users/me').set(from('203.0.113.9')).expect(401);
      } finally {
        await server.close();
      }
    });

    it('shares the count through Redis: an address refused by one instance is refused by the others', async function () {
      const url = process.env.REDIS_URL;
      if (!url) this.skip(); // needs a real Redis: .ci/run sets REDIS_URL
      const prefix = `rl:test:${randomBytes(4).toString('hex')}:`;
      const [storesA, storesB] = [
        await redisLimitStores(url!, { keyPrefix: prefix }),
        await redisLimitStores(url!, { keyPrefix: prefix }),
      ];
      const server = await listen(await buildApp({ limitStores: storesA }));
      try {
        await failEveryAllowedTime(contractClient(server.baseUrl));
        const other = contractClient(await buildApp({ limitStores: storesB }));
        const { key } = await issueTestKey();
        // The other instance learns it from the shared count at its first failure, and refuses from then on.
        await other.get('/api/v1/health').set('X-Service-API-Key', 'svc_live_not_a_key').expect(429);
        await other.get('/api/v1/health').set('X-Service-API-Key', key).expect(429);
      } finally {
        await server.close();
        await Promise.all([storesA.close(), storesB.close()]);
      }
    });

    it('counts only failures: requests that authenticate never use up the allowance', async () => {
      const { app, newStudent } = await generalApp();
      const alice = await newStudent();
      await contractClient(app).get('/api/users/me').set(alice.headers).expect(200);
      const res = await contractClient(app).get('/api/users/me').set('authorization', 'Bearer not.a.jwt').expect(401);
      assert.match(String(res.headers.ratelimit), /"5-minute"; r=299;/);
    });
  });

  describe('Cache-Control', () => {
    it('marks authenticated responses private on both surfaces, and a response carrying a new key no-store', async () => {
      const { api, newStudent } = await generalApp();
      const alice = await newStudent();
      assert.equal((await api.get('/api/users/me').set(alice.headers).expect(200)).headers['cache-control'], 'private');
      assert.equal((await api.get('/api/users/me').expect(401)).headers['cache-control'], 'private');
      const created = await api.post('/api/users/me/api-keys').set(alice.headers).send({ name: 'k' }).expect(201);
      assert.equal(created.headers['cache-control'], 'no-store');
      const partner = await partnerApp();
      const health = await partner.api.get('/api/v1/health').set('X-Service-API-Key', partner.key).expect(200);
      assert.equal(health.headers['cache-control'], 'private');
    });
  });
});
