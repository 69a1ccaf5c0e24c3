// db/queries/leaderboards.ts on the run's engine, on a university of the test's own: competition ranks over xp, names
// hidden for students inactive since the window's start, and how long the board read stays right (the earliest named
// activity, the first shown streak to lapse at the student's local midnight).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { DateTime } from 'luxon';
import { readLeaderboard } from '../../../db/queries/leaderboards.ts';
import { updateProfile } from '../../../db/queries/profile.ts';
import { recordStudyDay } from '../../../db/queries/streak.ts';
import { awardXp } from '../../../db/queries/xp.ts';
import { db, deleteNewStudents, newStudent } from '../../support/query-fixture.ts';

const universities: string[] = [];

/** A university no other test's students are in (universities are reference data: no query of the service adds one). */
async function newUniversity(): Promise<string> {
  const row = await db()
    .insertInto('universities')
    .values({
      name: `Query University ${randomUUID()}`,
      short_name: 'QU',
      city: 'Almaty',
      country: 'KZ',
      student_count: 100,
      is_verified: false,
      default_academic_system: 'credit',
      default_gpa_scale: '4.0',
      website: null,
      founded_year: null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  universities.push(row.id);
  return row.id;
}

/** A student of the university with `xp`, last active at `activeAt` (a study day then), or never. */
async function student(universityId: string, xp: number, activeAt: Date | null, timeZone = 'UTC'): Promise<string> {
  const id = await newStudent({ timeZone });
  await updateProfile(db(), id, { university_id: universityId }, new Date());
  if (xp > 0)
    await db()
      .transaction()
      .execute((trx) =>
        awardXp(
          trx,
          id,
          { key: 'leaderboard-test', source: 'readiness', amount: xp, localDate: '2026-03-02' },
          new Date(),
        ),
      );
  if (activeAt)
    await recordStudyDay(db(), id, DateTime.fromJSDate(activeAt, { zone: timeZone }).toISODate()!, activeAt);
  return id;
}

describe('leaderboard queries', () => {
  after(async () => {
    await deleteNewStudents();
    await db().deleteFrom('universities').where('id', 'in', universities).execute();
  });

  it('ranks by xp with equal xp sharing a rank, ties listed by id, and hides the names of students inactive since the start', async () => {
    const university = await newUniversity();
    const now = new Date();
    const activeSince = new Date(now.getTime() - 30 * 24 * 3600_000);
    const top = await student(university, 50, now);
    const tiedActive = await student(university, 30, now);
    const tiedInactive = await student(university, 30, new Date(activeSince.getTime() - 1));
    const never = await student(university, 10, null);
    await student(await newUniversity(), 100, now);

    const board = await readLeaderboard(db(), { activeSince, limit: 10, universityId: university });
    const tied = [tiedActive, tiedInactive].sort();
    const named = (id: string) => id === top || id === tiedActive;
    const nicknames = await db()
      .selectFrom('users')
      .select(['id', 'nickname'])
      .where('id', 'in', [top, ...tied, never])
      .execute();
    const nickname = new Map(nicknames.map((row) => [row.id, row.nickname]));
    assert.deepEqual(
      board.entries.map((e) => [e.rank, e.xp, e.nickname]),
      [[1, 50, nickname.get(top)], ...tied.map((id) => [2, 30, named(id) ? nickname.get(id) : null]), [4, 10, null]],
    );
    assert.ok(board.entries.every((e) => (e.nickname === null) === (e.first_name === null)));
    assert.deepEqual(
      (await readLeaderboard(db(), { activeSince, limit: 2, universityId: university })).entries.map((e) => e.rank),
      [1, 2],
    );
  });

  it('stays right until the earliest named activity leaves the window and the first shown streak lapses', async () => {
    const university = await newUniversity();
    const now = new Date();
    const earlier = new Date(now.getTime() - 3 * 3600_000);
    await student(university, 20, now, 'Asia/Almaty');
    await student(university, 10, earlier, 'America/New_York');
    await student(university, 5, new Date('2020-01-01T12:00:00Z')); // lapsed streak, hidden name

    const board = await readLeaderboard(db(), {
      activeSince: new Date('2021-01-01T00:00:00Z'),
      limit: 10,
      universityId: university,
    });
    assert.equal(board.namedSince, earlier.getTime());
    assert.deepEqual(
      board.entries.map((e) => e.streak),
      [1, 1, 0],
    );
    // A study day today lapses when the day after tomorrow starts in the student's zone; the earlier of the two.
    const lapse = (at: Date, zone: string) =>
      DateTime.fromJSDate(at, { zone }).startOf('day').plus({ days: 2 }).toMillis();
    assert.equal(board.streaksUntil, Math.min(lapse(now, 'Asia/Almaty'), lapse(earlier, 'America/New_York')));
  });
});
