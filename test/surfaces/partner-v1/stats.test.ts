import assert from 'node:assert/strict';
import { partnerApp } from '../../support/partner-app.ts';

describe('getStats', () => {
  it('counts what the database holds', async () => {
    const { api, key, db } = await partnerApp();
    const before = Date.now();
    const res = await api.get('/api/v1/stats').set('X-Service-API-Key', key).expect(200);
    const count = async (table: 'users' | 'universities' | 'flashcard_decks' | 'ai_messages' | 'study_rooms') =>
      Number((await db.selectFrom(table).select(db.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
    assert.equal(res.body.total_users, await count('users'));
    assert.equal(res.body.universities_count, await count('universities'));
    assert.equal(res.body.flashcard_decks, await count('flashcard_decks'));
    assert.equal(res.body.ai_messages_total, await count('ai_messages'));
    assert.equal(res.body.study_rooms_total, await count('study_rooms'));
    assert.ok(res.body.total_users >= 100, 'demo data makes the numbers meaningful');
    assert.ok(
      res.body.active_users_30d > 0 && res.body.active_users_30d < res.body.total_users,
      'some users are inactive',
    );
    assert.ok(Date.parse(res.body.generated_at) >= before - 1000, 'generated now');
  });

  it('is 401 with an unknown key', async () => {
    const { api } = await partnerApp();
    const res = await api
      .get('/api/v1/stats')
      .set('X-Service-API-Key', 'svc_live_' + 'x'.repeat(32))
      .expect(401);
    assert.match(res.body.detail, /unknown or revoked/);
  });
});
