// Access tokens that verified once are kept (server/auth/access-tokens.ts): a kept token is still held to its expiry,
// and a token that fails is never kept.
import assert from 'node:assert/strict';
import { accessTokenIssuer } from '../../server/auth/access-tokens.ts';
import { loadSigningKey } from '../../server/auth/signing-keys.ts';

describe('access token verification', () => {
  const claims = {
    user_id: '7d0c6a55-2a0e-4c1e-9a52-1f2b3c4d5e6f',
    client_id: 'c',
    scopes: ['tasks:read'],
    grant_id: '0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9',
  };

  it('accepts a kept token until its expiry second, and not from then on', async () => {
    let clock = new Date('2026-11-23T12:00:00Z');
    const issuer = accessTokenIssuer(await loadSigningKey(undefined), {
      issuer: 'http://issuer.test',
      now: () => clock,
    });
    const { token, expiresAt } = await issuer.issue(claims);
    assert.equal((await issuer.verify(token))?.sub, claims.user_id, 'verified, and kept');
    clock = new Date(expiresAt.getTime() - 1000);
    assert.equal((await issuer.verify(token))?.sid, claims.grant_id, 'kept, one second before expiry');
    clock = expiresAt;
    assert.equal(await issuer.verify(token), undefined, 'expired at exp');
    clock = new Date(expiresAt.getTime() - 1000);
    assert.equal(
      (await issuer.verify(token))?.sub,
      claims.user_id,
      'verified again from scratch once the clock allows',
    );
  });

  it('never keeps a token that failed: another issuer, a tampered signature', async () => {
    const now = () => new Date();
    const ours = accessTokenIssuer(await loadSigningKey(undefined), { issuer: 'http://issuer.test', now });
    const theirs = accessTokenIssuer(await loadSigningKey(undefined), { issuer: 'http://issuer.test', now });
    const { token } = await theirs.issue(claims);
    assert.equal(await ours.verify(token), undefined);
    assert.equal(await ours.verify(token), undefined, 'still refused the second time');
    const own = (await ours.issue(claims)).token;
    const tampered = own.slice(0, -4) + (own.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    assert.equal(await ours.verify(tampered), undefined);
  });
});
