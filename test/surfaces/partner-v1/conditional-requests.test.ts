// Partners poll: every operation documenting `ETag` answers `304` without a body to `If-None-Match` with the ETag it
// gave, and the full answer to any other one. Each request goes through the contract client (status, headers, body).
import assert from 'node:assert/strict';
import { LEADERBOARDS_CHANNEL } from '../../../db/queries/leaderboards.ts';
import { changeNotified } from '../../support/next-notification.ts';
import { partnerApp } from '../../support/partner-app.ts';

describe('conditional requests (partner v1)', () => {
  it('answers 304 to If-None-Match with the current ETag on every operation that documents it', async () => {
    const { api, key, db } = await partnerApp();
    const university = await db
      .selectFrom('universities')
      .select('id')
      .orderBy('student_count', 'desc')
      .executeTakeFirstOrThrow();
    const user = await db.selectFrom('users').select('nickname').orderBy('xp', 'desc').executeTakeFirstOrThrow();
    const paths = [
      '/api/v1/universities?country_code=kz&limit=5',
      `/api/v1/universities/${university.id}`,
      `/api/v1/users/${encodeURIComponent(user.nickname)}/public`,
      '/api/v1/leaderboards/global?limit=10',
      `/api/v1/leaderboards/university/${university.id}`,
      `/api/v1/holidays/kz?year=${new Date().getUTCFullYear()}`,
    ];
    for (const path of paths) {
      const first = await api.get(path).set('X-Service-API-Key', key).expect(200);
      const etag = first.headers.etag as string;
      assert.match(etag, /^W\/"/, path);

      const unchanged = await api.get(path).set('X-Service-API-Key', key).set('If-None-Match', etag).expect(304);
      assert.equal(unchanged.text ?? '', '', `${path}: no body`);
      assert.equal(unchanged.headers.etag, etag, path);
      assert.ok(unchanged.headers.ratelimit, `${path}: a 304 counts and says so`);

      const other = await api
        .get(path)
        .set('X-Service-API-Key', key)
        .set('If-None-Match', 'W/"something-else"')
        .expect(200);
      assert.deepEqual(other.body, first.body, path);
    }
  });

  it('answers 304 to a matching If-None-Match sent with Cache-Control: no-cache, as fetch sends it', async () => {
    // no-cache tells caches to ask the origin again (RFC 9111 §5.2.1.4); the origin still evaluates If-None-Match
    // (RFC 9110 §13.1.2). undici's fetch adds it to every request carrying If-None-Match.
    const { api, key } = await partnerApp();
    const path = '/api/v1/universities?country_code=kz&limit=3';
    const first = await api.get(path).set('X-Service-API-Key', key).expect(200);
    for (const cacheControl of ['no-cache', 'max-age=0, no-cache']) {
      const unchanged = await api
        .get(path)
        .set('X-Service-API-Key', key)
        .set('If-None-Match', first.headers.etag as string)
        .set('Cache-Control', cacheControl)
        .set('Pragma', 'no-cache')
        .expect(304);
      assert.equal(unchanged.text ?? '', '', cacheControl);
    }
  });

  it('answers in full once the body has changed', async () => {
    const { api, key, db } = await partnerApp();
    const path = '/api/v1/leaderboards/global?limit=3';
    const before = await api.get(path).set('X-Service-API-Key', key).expect(200);
    const top = await db.selectFrom('users').select(['id', 'xp']).orderBy('xp', 'desc').executeTakeFirstOrThrow();
    // Boards kept in memory show a change once its notification arrives (db/queries/leaderboards.ts).
    await changeNotified(LEADERBOARDS_CHANNEL, () =>
      db
        .updateTable('users')
        .set({ xp: top.xp + 1 })
        .where('id', '=', top.id)
        .execute(),
    );
    try {
      const after = await api
        .get(path)
        .set('X-Service-API-Key', key)
        .set('If-None-Match', before.headers.etag as string)
        .expect(200);
      assert.notEqual(after.headers.etag, before.headers.etag);
    } finally {
      await db.updateTable('users').set({ xp: top.xp }).where('id', '=', top.id).execute();
    }
  });

  it('does not answer 304 to a request refused before its handler', async () => {
    const { api, key } = await partnerApp();
    const first = await api.get('/api/v1/universities?limit=2').set('X-Service-API-Key', key).expect(200);
    await api
      .get('/api/v1/universities?limit=2')
      .set('If-None-Match', first.headers.etag as string)
      .expect(401);
  });
});
