import assert from 'node:assert/strict';
import { notifyUniversitiesChanged, UNIVERSITIES_CHANNEL } from '../../../db/queries/universities.ts';
import { seedReference } from '../../../db/seed/index.ts';
import { nextNotification } from '../../support/next-notification.ts';
import { partnerApp } from '../../support/partner-app.ts';

describe('listUniversities', () => {
  it('lists 20 universities by default, largest first', async () => {
    const { api, key } = await partnerApp();
    const res = await api.get('/api/v1/universities').set('X-Service-API-Key', key).expect(200);
    assert.equal(res.body.length, 20);
    const counts = res.body.map((u: { student_count: number }) => u.student_count);
    assert.deepEqual(
      counts,
      [...counts].sort((a, b) => b - a),
    );
    for (const u of res.body) assert.equal(u.country_code, u.country.toLowerCase());
  });

  it('filters by country in either case and honours limit', async () => {
    const { api, key } = await partnerApp();
    const lower = await api
      .get('/api/v1/universities?country_code=kz&limit=5')
      .set('X-Service-API-Key', key)
      .expect(200);
    const upper = await api
      .get('/api/v1/universities?country_code=KZ&limit=5')
      .set('X-Service-API-Key', key)
      .expect(200);
    assert.equal(lower.body.length, 5);
    assert.deepEqual(lower.body, upper.body);
    assert.ok(lower.body.every((u: { country: string }) => u.country === 'KZ'));
    const all = await api.get('/api/v1/universities?limit=100').set('X-Service-API-Key', key).expect(200);
    assert.ok(all.body.length >= 30, 'at least 30 reference universities');
    assert.ok(all.body.some((u: { country: string }) => u.country === 'RU'));
  });

  it('answers an unknown country with an empty list', async () => {
    const { api, key } = await partnerApp();
    const res = await api.get('/api/v1/universities?country_code=zz').set('X-Service-API-Key', key).expect(200);
    assert.deepEqual(res.body, []);
  });

  for (const bad of [
    'limit=0',
    'limit=101',
    'limit=abc',
    'limit=2.5',
    'country_code=kaz',
    'country_code=k1',
    'limit=1&limit=2',
  ]) {
    it(`rejects ${bad} with a 400 that names the parameter`, async () => {
      const { api, key } = await partnerApp();
      const res = await api.get(`/api/v1/universities?${bad}`).set('X-Service-API-Key', key).expect(400);
      assert.equal(res.body.code, 'invalid_request');
      assert.ok(
        res.body.errors.some((e: { path: string }) => e.path.startsWith('query.')),
        JSON.stringify(res.body.errors),
      );
    });
  }
});

describe('getUniversity', () => {
  it('returns the full record with the university figures', async () => {
    const { api, key, db } = await partnerApp();
    const [first] = (await api.get('/api/v1/universities?limit=1').set('X-Service-API-Key', key).expect(200)).body;
    const res = await api.get(`/api/v1/universities/${first.id}`).set('X-Service-API-Key', key).expect(200);
    assert.deepEqual(
      { ...res.body, website: undefined, founded_year: undefined, active_students_30d: undefined, total_xp: undefined },
      {
        ...first,
        website: undefined,
        founded_year: undefined,
        active_students_30d: undefined,
        total_xp: undefined,
      },
    );
    const students = await db.selectFrom('users').select(['xp']).where('university_id', '=', first.id).execute();
    assert.equal(
      res.body.total_xp,
      students.reduce((sum, s) => sum + s.xp, 0),
    );
    assert.ok(res.body.active_students_30d <= students.length);
    assert.match(res.body.website, /^https:\/\//);
  });

  it('is 404 for an unknown id and 400 for a malformed one', async () => {
    const { api, key } = await partnerApp();
    const missing = await api
      .get('/api/v1/universities/00000000-0000-4000-8000-000000000000')
      .set('X-Service-API-Key', key)
      .expect(404);
    assert.equal(missing.body.code, 'not_found');
    const malformed = await api.get('/api/v1/universities/not-a-uuid').set('X-Service-API-Key', key).expect(400);
    assert.equal(malformed.body.errors[0].path, 'path.uni_id');
  });
});

describe('listUniversities from memory', () => {
  const next = (kind: 'missed' | 'message') => nextNotification(UNIVERSITIES_CHANNEL, kind);

  it('serves the list from memory, and the new list once a change of the universities is notified', async () => {
    const { api, key, db } = await partnerApp();
    await next('missed');
    const path = '/api/v1/universities?country_code=kz&limit=100';
    const before = await api.get(path).set('X-Service-API-Key', key).expect(200);
    const largest = before.body[0] as { id: string; student_count: number };
    try {
      await db.updateTable('universities').set({ student_count: 0 }).where('id', '=', largest.id).execute();
      // Nobody was told: the list kept in memory still answers, as the same bytes.
      const kept = await api.get(path).set('X-Service-API-Key', key).expect(200);
      assert.deepEqual(kept.body, before.body);
      assert.equal(kept.headers.etag, before.headers.etag);

      const delivered = next('message');
      await db.transaction().execute((trx) => notifyUniversitiesChanged(trx));
      await delivered;
      const after = await api.get(path).set('X-Service-API-Key', key).expect(200);
      assert.equal(after.body.at(-1).id, largest.id, 'the emptied university is last now');
      assert.equal(after.body.at(-1).student_count, 0);
      assert.notEqual(after.headers.etag, before.headers.etag, 'the new list is serialized anew');
      await api
        .get(path)
        .set('X-Service-API-Key', key)
        .set('If-None-Match', before.headers.etag as string)
        .expect(200);
    } finally {
      // The reference seed puts the row back, and tells the processes so.
      const delivered = next('message');
      await seedReference(db, { now: new Date() });
      await delivered;
    }
    assert.deepEqual((await api.get(path).set('X-Service-API-Key', key).expect(200)).body, before.body);
  });
});
