// How the surfaces treat the credentials they are sent, beyond valid and invalid: tokens whose claims have the
// wrong shapes, more than one credential in a request, and many failed ones from one address.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { accessTokenIssuer, loadSigningKey } from '../../server/auth/access-tokens.ts';
import { contractClient } from '../support/contract.ts';
import { generalApp } from '../support/general-app.ts';
import { buildApp, TEST_ISSUER } from '../support/partner-app.ts';

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
      sid = (await context.db.selectFrom('oauth_grants').select('id').where('user_id', '=', sub).executeTakeFirstOrThrow()).id;
      sign = (claims) =>
        new SignJWT({ client_id: 'test', scope: 'profile:read', sid, ...claims })
          .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: key.publicJwk.kid! })
          .setIssuer(TEST_ISSUER)
          .setAudience(tokens.audience)
          .setSubject(String(claims.sub ?? sub))
          .setIssuedAt()
          .setExpirationTime('5m')
          .setJti(randomUUID())
          .sign(key.privateKey);
    });

    it('accepts the well-formed token the bad ones are variations of', async () => {
      await api.get('/api/users/me').set('authorization', `Bearer ${await sign({})}`).expect(200);
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
        const res = await api.get('/api/users/me').set('authorization', `Bearer ${await sign(claims)}`).expect(401);
        assert.match(String(res.headers['www-authenticate']), /error="invalid_token"/);
      });
    }
  });
});
