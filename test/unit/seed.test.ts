// Seeding against a real embedded database: idempotent reference data, demo data inserted once, determinism.
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { Db } from '../../db/connect.ts';
import { generateDemoData } from '../../db/seed/demo.ts';
import { isEmpty, seedDemo, seedReference } from '../../db/seed/index.ts';
import { universities } from '../../db/seed/universities.ts';
import { createEmbeddedDatabase } from '../support/test-db.ts';

const now = new Date('2026-11-22T12:00:00Z');
const DAY_MS = 86_400_000;

async function count(
  db: Db,
  table: 'universities' | 'holidays' | 'users' | 'flashcard_decks' | 'ai_messages' | 'study_rooms',
): Promise<number> {
  const row = await db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('seed', () => {
  let db: Db;
  before(async () => {
    // PGlite in memory, whichever engine the run uses, keeps the test self-contained.
    db = await createEmbeddedDatabase();
  });
  after(async () => {
    await db?.destroy();
  });

  describe('seedReference', () => {
    it('fills an empty database with the universities and KZ/RU holidays of 2025–2028', async () => {
      assert.equal(await isEmpty(db), true);
      const result = await seedReference(db, { now });
      assert.equal(await isEmpty(db), false);
      assert.ok(result.universities >= 30);
      assert.equal(await count(db, 'universities'), result.universities);
      assert.equal(await count(db, 'holidays'), result.holidays);

      const byCountry = await db
        .selectFrom('universities')
        .select(['country', (eb) => eb.fn.countAll<number>().as('n')])
        .groupBy('country')
        .orderBy('country')
        .execute();
      assert.deepEqual(
        byCountry.map((r) => [r.country, Number(r.n) >= 15]),
        [
          ['KZ', true],
          ['RU', true],
        ],
      );

      const years = await db
        .selectFrom('holidays')
        .select([
          'country_code',
          sql<number>`min(extract(year from on_date))::int`.as('first'),
          sql<number>`max(extract(year from on_date))::int`.as('last'),
        ])
        .groupBy('country_code')
        .orderBy('country_code')
        .execute();
      assert.deepEqual(years, [
        { country_code: 'KZ', first: 2025, last: 2028 },
        { country_code: 'RU', first: 2025, last: 2028 },
      ]);
      const countries = await db
        .selectFrom('holiday_countries')
        .select('country_code')
        .orderBy('country_code')
        .execute();
      assert.deepEqual(
        countries.map((c) => c.country_code),
        ['KZ', 'RU'],
      );
    });

    it('gives the same rows when run again and restores edited universities', async () => {
      const before = { universities: await count(db, 'universities'), holidays: await count(db, 'holidays') };
      const msu = universities.find((u) => u.short_name === 'MSU');
      assert.ok(msu);
      await db
        .updateTable('universities')
        .set({ city: 'Nowhere', student_count: 1 })
        .where('name', '=', msu.name)
        .execute();

      const again = await seedReference(db, { now });
      assert.deepEqual(again, before);
      assert.deepEqual(
        { universities: await count(db, 'universities'), holidays: await count(db, 'holidays') },
        before,
      );
      const restored = await db
        .selectFrom('universities')
        .select(['city', 'student_count'])
        .where('name', '=', msu.name)
        .executeTakeFirstOrThrow();
      assert.deepEqual(restored, { city: msu.city, student_count: msu.student_count });
    });

    it('stores Nauryz 2026 as a break read back as plain dates', async () => {
      const rows = await db
        .selectFrom('holidays')
        .select(['on_date', 'is_break'])
        .where('country_code', '=', 'KZ')
        .where('name', '=', 'Наурыз мейрамы / Nauryz')
        .where('on_date', '>=', '2026-01-01')
        .where('on_date', '<=', '2026-12-31')
        .orderBy('on_date')
        .execute();
      assert.deepEqual(
        rows,
        ['21', '22', '23', '24'].map((d) => ({ on_date: `2026-03-${d}`, is_break: true })),
      );
    });
  });

  describe('seedDemo', () => {
    it('inserts about 300 users with unique nicknames (ignoring case) and their activity', async () => {
      const result = await seedDemo(db, { seed: 42, now });
      assert.equal(result.users, 300);
      assert.ok(result.decks > 0 && result.studyRooms >= 20 && result.studyRooms <= 40);
      assert.ok(result.aiMessages >= 200 && result.aiMessages <= 2500, `${result.aiMessages} messages`);
      assert.deepEqual(
        {
          users: await count(db, 'users'),
          decks: await count(db, 'flashcard_decks'),
          aiMessages: await count(db, 'ai_messages'),
          studyRooms: await count(db, 'study_rooms'),
        },
        result,
      );
      const distinct = await db
        .selectFrom('users')
        .select(sql<number>`count(distinct lower(nickname))`.as('n'))
        .executeTakeFirstOrThrow();
      assert.equal(Number(distinct.n), 300);
      const withUniversity = await db
        .selectFrom('users')
        .innerJoin('universities', 'universities.id', 'users.university_id')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      assert.ok(
        Number(withUniversity.n) >= 240 && Number(withUniversity.n) < 300,
        `${withUniversity.n} users with a university`,
      );
    });

    it('does nothing once users exist', async () => {
      const users = await count(db, 'users');
      assert.deepEqual(await seedDemo(db, { seed: 7, now }), { users: 0, decks: 0, aiMessages: 0, studyRooms: 0 });
      assert.equal(await count(db, 'users'), users);
    });
  });
});

describe('generateDemoData', () => {
  const universityIds = ['00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002'];
  const data = generateDemoData({ seed: 1, now, universityIds });

  it('is the same for the same seed and differs for another seed', () => {
    assert.deepEqual(generateDemoData({ seed: 1, now, universityIds }), data);
    const other = generateDemoData({ seed: 2, now, universityIds });
    assert.notDeepEqual(
      other.users.map((u) => u.nickname),
      data.users.map((u) => u.nickname),
    );
  });

  it('makes users that fit the columns and the described distribution', () => {
    const { users } = data;
    assert.equal(users.length, 300);
    assert.equal(generateDemoData({ seed: 1, now, universityIds, userCount: 25 }).users.length, 25);
    const dayMs = (d: unknown) => (d instanceof Date ? d.getTime() : NaN);
    let active = 0;
    for (const u of users) {
      assert.match(u.nickname, /^[A-Za-z0-9_.]{3,30}$/);
      assert.ok(u.xp !== undefined && u.xp >= 0 && u.xp <= 50_000);
      assert.ok(u.streak !== undefined && u.streak >= 0 && u.streak <= 120);
      assert.ok(['free', 'plus', 'contract'].includes(String(u.plan)));
      assert.equal(
        u.contract_per_minute != null,
        u.plan === 'contract',
        'a contract carries its limits, no other plan does',
      );
      assert.ok(u.university_id === null || universityIds.includes(u.university_id!));
      const created = dayMs(u.created_at);
      assert.ok(created >= now.getTime() - 730 * DAY_MS && created <= now.getTime());
      if (u.last_active_at) assert.ok(created < dayMs(u.last_active_at));
      const recent = u.last_active_at != null && dayMs(u.last_active_at) >= now.getTime() - 30 * DAY_MS;
      if (recent) active++;
      else assert.equal(u.streak, 0);
    }
    assert.ok(active >= 180 && active <= 240, `${active} active users`);
    assert.equal(new Set(users.map((u) => u.nickname.toLowerCase())).size, users.length);
    assert.ok(users.filter((u) => u.plan === 'free').length > users.length / 2);
    assert.ok(new Set(users.map((u) => u.xp)).size > users.length * 0.8, 'xp mostly distinct');
    assert.ok(users.some((u) => u.avatar_url === null) && users.some((u) => u.avatar_url !== null));
  });

  it('links decks, messages and rooms to generated users, with alternating chat roles', () => {
    const ids = new Set(data.users.map((u) => u.id));
    assert.ok(data.decks.every((d) => ids.has(d.user_id)));
    assert.ok(data.studyRooms.every((r) => r.created_by === null || ids.has(r.created_by!)));
    const messages = data.aiMessages;
    assert.ok(messages.length >= 200 && messages.length <= 2500);
    messages.forEach((m, i) => assert.equal(m.role, i % 2 === 0 ? 'user' : 'assistant'));
    assert.ok(messages.every((m) => ids.has(m.user_id) && (m.created_at as Date).getTime() <= now.getTime()));
  });
});
