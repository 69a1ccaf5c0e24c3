import assert from 'node:assert/strict';
import { HOLIDAYS_CHANNEL, notifyHolidaysChanged } from '../../../db/queries/holidays.ts';
import { storeHolidays } from '../../../db/seed/holiday-store.ts';
import { changeNotified, nextNotification } from '../../support/next-notification.ts';
import { partnerApp } from '../../support/partner-app.ts';

type Holiday = { on_date: string; name: string; is_break: boolean; description: string };

describe('listHolidays', () => {
  it('lists Kazakhstan holidays with Kazakh and English names and Nauryz as a break', async () => {
    const { api, key } = await partnerApp();
    const res = await api.get('/api/v1/holidays/kz?year=2026').set('X-Service-API-Key', key).expect(200);
    const nauryz = res.body.filter((h: Holiday) => h.name.includes('Nauryz'));
    assert.ok(nauryz.length >= 3);
    assert.ok(nauryz.every((h: Holiday) => h.is_break && /Наурыз/.test(h.name)));
    assert.ok(
      res.body.some((h: Holiday) => h.on_date === '2026-12-16'),
      'Independence Day',
    );
    const dates = res.body.map((h: Holiday) => h.on_date);
    assert.deepEqual(dates, [...dates].sort(), 'in date order');
    assert.ok(
      res.body.every(
        (h: Holiday) => h.on_date.startsWith('2026-') && h.name.includes(' / ') && h.description.length > 0,
      ),
    );
  });

  it('defaults to the current year and marks the Russian New Year holidays as a break', async () => {
    const { api, key } = await partnerApp();
    const year = new Date().getUTCFullYear();
    const res = await api.get('/api/v1/holidays/RU').set('X-Service-API-Key', key).expect(200);
    const january = res.body.filter((h: Holiday) => h.on_date >= `${year}-01-01` && h.on_date <= `${year}-01-08`);
    assert.equal(january.length, 8);
    assert.ok(january.every((h: Holiday) => h.is_break));
    const victoryDay = res.body.find((h: Holiday) => h.on_date === `${year}-05-09`);
    assert.equal(victoryDay?.is_break, false);
  });

  it('computes a year outside the seeded range on first use', async () => {
    const { api, key, db } = await partnerApp();
    const res = await api.get('/api/v1/holidays/kz?year=2061').set('X-Service-API-Key', key).expect(200);
    assert.ok(res.body.length > 5);
    const stored = await db
      .selectFrom('holidays')
      .select('on_date')
      .where('country_code', '=', 'KZ')
      .where('on_date', '>=', '2061-01-01')
      .where('on_date', '<=', '2061-12-31')
      .execute();
    assert.equal(stored.length, res.body.length, 'stored for the next request');
  });

  it('answers 404 for a country that is not enabled, and serves it once an operator enables it', async () => {
    const { api, key, db } = await partnerApp();
    const refused = await api.get('/api/v1/holidays/fr?year=2026').set('X-Service-API-Key', key).expect(404);
    assert.match(refused.body.detail, /FR/);
    // Processes keep the enabled countries in memory: they serve FR once the commit's notification reaches them.
    await changeNotified(HOLIDAYS_CHANNEL, () => storeHolidays(db, 'FR', [2026]));
    const res = await api.get('/api/v1/holidays/fr?year=2026').set('X-Service-API-Key', key).expect(200);
    assert.ok(
      res.body.some((h: Holiday) => h.on_date === '2026-07-14'),
      'Bastille Day',
    );
  });

  for (const bad of ['holidays/kaz', 'holidays/k1', 'holidays/kz?year=1999', 'holidays/kz?year=20x6']) {
    it(`rejects /${bad} with 400`, async () => {
      const { api, key } = await partnerApp();
      const res = await api.get(`/api/v1/${bad}`).set('X-Service-API-Key', key).expect(400);
      assert.equal(res.body.code, 'invalid_request');
    });
  }
});

describe('listHolidays from memory', () => {
  it('serves a year from memory, as the same bytes, and the stored year again once a change is notified', async () => {
    const { api, key, db } = await partnerApp();
    await nextNotification(HOLIDAYS_CHANNEL, 'missed');
    const path = '/api/v1/holidays/kz?year=2027';
    const before = await api.get(path).set('X-Service-API-Key', key).expect(200);
    const first = before.body[0] as Holiday;
    const renamed = { name: `${first.name} (moved)` };
    const rename = () =>
      db
        .updateTable('holidays')
        .set(renamed)
        .where('country_code', '=', 'KZ')
        .where('on_date', '=', first.on_date)
        .where('name', '=', first.name)
        .execute();
    try {
      await rename();
      // Nobody was told: the year kept in memory still answers, as the same bytes.
      const kept = await api.get(path).set('X-Service-API-Key', key).expect(200);
      assert.deepEqual(kept.body, before.body);
      assert.equal(kept.headers.etag, before.headers.etag);

      // The seed stores the year anew and tells every process.
      await changeNotified(HOLIDAYS_CHANNEL, () => storeHolidays(db, 'KZ', [2027]));
      const after = await api.get(path).set('X-Service-API-Key', key).expect(200);
      assert.deepEqual(after.body, before.body, 'the stored year, read again');
      await rename();
      await changeNotified(HOLIDAYS_CHANNEL, () => db.transaction().execute((trx) => notifyHolidaysChanged(trx)));
      const changed = await api.get(path).set('X-Service-API-Key', key).expect(200);
      assert.ok(
        changed.body.some((h: Holiday) => h.name === renamed.name),
        'the renamed holiday, once notified',
      );
      assert.notEqual(changed.headers.etag, before.headers.etag, 'serialized anew');
    } finally {
      await changeNotified(HOLIDAYS_CHANNEL, () => storeHolidays(db, 'KZ', [2027]));
    }
  });
});
