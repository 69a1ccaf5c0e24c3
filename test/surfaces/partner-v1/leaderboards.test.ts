import assert from 'node:assert/strict';
import { partnerApp } from '../../support/partner-app.ts';

const DAY_MS = 24 * 3600 * 1000;
type Entry = { rank: number; nickname: string | null; first_name: string | null; xp: number; streak: number };

function assertCompetitionRanks(entries: Entry[]) {
  entries.forEach((entry, i) => {
    const previous = entries[i - 1];
    if (!previous) return assert.equal(entry.rank, 1);
    assert.ok(entry.xp <= previous.xp, 'sorted by xp, highest first');
    assert.equal(entry.rank, entry.xp === previous.xp ? previous.rank : i + 1, `rank of place ${i + 1}`);
  });
}

describe('getGlobalLeaderboard', () => {
  it('ranks the top users by xp and hides the names of inactive ones', async () => {
    const { api, key, db } = await partnerApp();
    const res = await api.get('/api/v1/leaderboards/global?limit=100').set('X-Service-API-Key', key).expect(200);
    assert.equal(res.body.length, 100);
    assertCompetitionRanks(res.body);
    const top = await db
      .selectFrom('users')
      .select(['nickname', 'first_name', 'xp', 'streak', 'last_active_at'])
      .orderBy('xp', 'desc')
      .orderBy('id')
      .limit(100)
      .execute();
    const activeSince = Date.now() - 30 * DAY_MS;
    top.forEach((user, i) => {
      const active = user.last_active_at !== null && user.last_active_at.getTime() >= activeSince;
      assert.deepEqual(
        { ...res.body[i], rank: undefined },
        {
          rank: undefined,
          nickname: active ? user.nickname : null,
          first_name: active ? user.first_name : null,
          xp: user.xp,
          streak: user.streak,
        },
      );
    });
    assert.ok(
      res.body.some((e: Entry) => e.nickname === null),
      'the demo data has inactive users in the top 100',
    );
  });

  it('returns 20 entries by default and refuses limit out of range', async () => {
    const { api, key } = await partnerApp();
    const res = await api.get('/api/v1/leaderboards/global').set('X-Service-API-Key', key).expect(200);
    assert.equal(res.body.length, 20);
    await api.get('/api/v1/leaderboards/global?limit=1000').set('X-Service-API-Key', key).expect(400);
  });
});

describe('getUniversityLeaderboard', () => {
  it('ranks only the students of that university', async () => {
    const { api, key, db } = await partnerApp();
    const busiest = await db
      .selectFrom('users')
      .select(['university_id', db.fn.countAll<number>().as('n')])
      .where('university_id', 'is not', null)
      .groupBy('university_id')
      .orderBy('n', 'desc')
      .executeTakeFirstOrThrow();
    const res = await api
      .get(`/api/v1/leaderboards/university/${busiest.university_id}?limit=100`)
      .set('X-Service-API-Key', key)
      .expect(200);
    assert.equal(res.body.length, Math.min(100, Number(busiest.n)));
    assertCompetitionRanks(res.body);
    const members = await db
      .selectFrom('users')
      .select(['xp'])
      .where('university_id', '=', busiest.university_id)
      .orderBy('xp', 'desc')
      .execute();
    assert.deepEqual(
      res.body.map((e: Entry) => e.xp),
      members.slice(0, 100).map((m) => m.xp),
    );
  });

  it('is 404 for an unknown university and 400 for a malformed id', async () => {
    const { api, key } = await partnerApp();
    await api
      .get('/api/v1/leaderboards/university/00000000-0000-4000-8000-000000000000')
      .set('X-Service-API-Key', key)
      .expect(404);
    await api.get('/api/v1/leaderboards/university/42').set('X-Service-API-Key', key).expect(400);
  });
});
