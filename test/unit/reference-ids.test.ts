// Reference ids are the same in every installation: derived from natural keys, kept by a re-seed, and moved to by
// the migration on databases seeded with random ids before.
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { Migrator } from 'kysely';
import { migrateToLatest } from '../../db/migrate.ts';
import { migrations } from '../../db/migrations/index.ts';
import { seedReference } from '../../db/seed/index.ts';
import { universityId } from '../../db/seed/reference-ids.ts';
import { universities } from '../../db/seed/universities.ts';
import { createFreshDatabase, createUnmigratedEmbeddedDatabase } from '../support/test-db.ts';

const now = new Date('2026-11-22T12:00:00Z');
const kaznu = universities.find((u) => u.short_name === 'KazNU')!;

describe('stable reference ids', () => {
  it('derive a university id from its website host, without www. and letter case', () => {
    assert.equal(universityId('https://www.kaznu.kz'), universityId('https://KAZNU.kz/about'));
    assert.notEqual(universityId('https://www.kaznu.kz'), universityId('https://www.msu.ru'));
    assert.match(
      universityId('https://www.kaznu.kz'),
      /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    assert.equal(
      new Set(universities.map((u) => u.id)).size,
      universities.length,
      'two universities share a website host',
    );
  });

  it('are identical in two fresh databases and survive a re-seed', async () => {
    const idsOf = async () => {
      const database = await createFreshDatabase();
      try {
        await seedReference(database.db, { now });
        const first = await database.db.selectFrom('universities').select(['id', 'name']).orderBy('name').execute();
        await seedReference(database.db, { now: new Date() });
        const again = await database.db.selectFrom('universities').select(['id', 'name']).orderBy('name').execute();
        assert.deepEqual(again, first, 're-seed changed the ids');
        return first;
      } finally {
        await database.close();
      }
    };
    const [one, two] = [await idsOf(), await idsOf()];
    assert.deepEqual(one, two);
    assert.equal(one.find((u) => u.name === kaznu.name)?.id, universityId(kaznu.website));
  });

  it('are moved to by the migration, users following their university', async () => {
    const db = await createUnmigratedEmbeddedDatabase();
    try {
      const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
      const before = await migrator.migrateTo('20261123_0002_personal_key_grants');
      assert.equal(before.error, undefined);
      // What seeding did before: random ids.
      const old = await db
        .insertInto('universities')
        .values(universities.map(({ id: _stable, ...row }) => row))
        .returning(['id', 'name'])
        .execute();
      const oldKaznu = old.find((u) => u.name === kaznu.name)!.id;
      assert.notEqual(oldKaznu, kaznu.id);
      await db
        .insertInto('users')
        .values({ nickname: 'moved_student', first_name: 'Moved', university_id: oldKaznu })
        .execute();

      assert.equal((await migrateToLatest(db))[0], '20261123_0003_stable_university_ids');
      const rows = await db.selectFrom('universities').select(['id', 'website']).execute();
      assert.equal(rows.length, universities.length);
      for (const row of rows) assert.equal(row.id, universityId(row.website!));
      const student = await db
        .selectFrom('users')
        .select('university_id')
        .where('nickname', '=', 'moved_student')
        .executeTakeFirstOrThrow();
      assert.equal(student.university_id, kaznu.id);

      await seedReference(db, { now });
      const count = await db
        .selectFrom('universities')
        .select(sql<number>`count(*)::int`.as('n'))
        .executeTakeFirstOrThrow();
      assert.equal(count.n, universities.length, 'a re-seed after the migration duplicated universities');
    } finally {
      await db.destroy();
    }
  });
});
