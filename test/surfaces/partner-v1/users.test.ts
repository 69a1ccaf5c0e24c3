import assert from 'node:assert/strict';
import { partnerApp } from '../../support/partner-app.ts';

describe('getPublicUserProfile', () => {
  it('finds a user by nickname in any case and shows only public fields', async () => {
    const { api, key, db } = await partnerApp();
    const user = await db
      .selectFrom('users')
      .selectAll()
      .where('bio', '!=', '')
      .orderBy('xp', 'desc')
      .executeTakeFirstOrThrow();
    const res = await api
      .get(`/api/v1/users/${encodeURIComponent(user.nickname.toUpperCase())}/public`)
      .set('X-Service-API-Key', key)
      .expect(200);
    assert.deepEqual(res.body, {
      nickname: user.nickname,
      first_name: user.first_name,
      avatar_url: user.avatar_url,
      bio: user.bio,
      xp: user.xp,
      // v1's names for the plan (contract is pro there).
      premium_tier: { free: 'free', plus: 'plus', contract: 'pro' }[user.plan],
      joined_at: user.created_at.toISOString().slice(0, 10),
    });
  });

  it('is 404 for an unknown nickname and 400 for an over-long one', async () => {
    const { api, key } = await partnerApp();
    const res = await api.get('/api/v1/users/no_such_user_here/public').set('X-Service-API-Key', key).expect(404);
    assert.match(res.body.detail, /no_such_user_here/);
    await api
      .get(`/api/v1/users/${'a'.repeat(65)}/public`)
      .set('X-Service-API-Key', key)
      .expect(400);
  });
});
