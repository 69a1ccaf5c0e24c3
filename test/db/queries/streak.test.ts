// db/queries/streak.ts on the run's engine: how a study day moves the streak, and how it reads lapsed, by the date in
// the student's own zone (UTC+14 and UTC-11 are a day or two apart).
import assert from 'node:assert/strict';
import { DateTime } from 'luxon';
import { sql } from 'kysely';
import { currentStreak, LAST_ACTIVE_STEP_SECONDS, recordStudyDay } from '../../../db/queries/streak.ts';
import { db, deleteNewStudents, newStudent } from '../../support/query-fixture.ts';

const streakOf = async (userId: string) => {
  const row = await db()
    .selectFrom('users')
    .select(['streak', currentStreak.as('current'), 'last_study_date'])
    .where('id', '=', userId)
    .executeTakeFirstOrThrow();
  return { stored: row.streak, current: row.current, last: row.last_study_date };
};

describe('streak queries', () => {
  after(deleteNewStudents);

  it('grows on the next day, stays on the same day, restarts after a gap, and ignores a day before the last', async () => {
    const student = await newStudent();
    const now = new Date();
    const day = async (date: string) => {
      await recordStudyDay(db(), student, date, now);
      const { stored, last } = await streakOf(student);
      return [stored, last];
    };
    assert.deepEqual(await day('2026-03-01'), [1, '2026-03-01']);
    assert.deepEqual(await day('2026-03-02'), [2, '2026-03-02']);
    assert.deepEqual(await day('2026-03-02'), [2, '2026-03-02']);
    assert.deepEqual(await day('2026-03-01'), [2, '2026-03-02']); // an offline review synced late
    assert.deepEqual(await day('2026-03-03'), [3, '2026-03-03']);
    assert.deepEqual(await day('2026-03-05'), [1, '2026-03-05']);
  });

  it('leaves the row as it was for another study action on the same day within the step of the last activity', async () => {
    const student = await newStudent();
    const version = async () =>
      (
        await sql<{ version: string; last_active_at: Date }>`select xmin::text as version, last_active_at from users
          where id = ${student}`.execute(db())
      ).rows[0]!;
    const at = new Date('2026-03-02T10:00:00Z');
    await recordStudyDay(db(), student, '2026-03-02', at);
    const first = await version();
    await recordStudyDay(db(), student, '2026-03-02', new Date(at.getTime() + LAST_ACTIVE_STEP_SECONDS * 1000 - 1));
    assert.deepEqual(await version(), first);
    const later = new Date(at.getTime() + LAST_ACTIVE_STEP_SECONDS * 1000);
    await recordStudyDay(db(), student, '2026-03-02', later);
    assert.equal((await version()).last_active_at.toISOString(), later.toISOString());
  });

  it("reads a streak as lapsed once its last day is before yesterday in the student's own zone", async () => {
    const ahead = await newStudent({ timeZone: 'Pacific/Kiritimati' }); // UTC+14
    const behind = await newStudent({ timeZone: 'Pacific/Pago_Pago' }); // UTC-11
    const now = DateTime.now();
    const today = (zone: string) => now.setZone(zone).startOf('day');
    // Two days ago in Kiritimati is yesterday or the day before in Pago Pago, never earlier.
    const twoDaysAgo = today('Pacific/Kiritimati').minus({ days: 2 }).toISODate()!;
    for (const student of [ahead, behind]) {
      await recordStudyDay(db(), student, DateTime.fromISO(twoDaysAgo).minus({ days: 1 }).toISODate()!, new Date());
      await recordStudyDay(db(), student, twoDaysAgo, new Date());
    }
    assert.deepEqual(await streakOf(ahead), { stored: 2, current: 0, last: twoDaysAgo });
    assert.deepEqual(await streakOf(behind), { stored: 2, current: 2, last: twoDaysAgo });

    await recordStudyDay(db(), ahead, today('Pacific/Kiritimati').minus({ days: 1 }).toISODate()!, new Date());
    assert.deepEqual(await streakOf(ahead), {
      stored: 3,
      current: 3,
      last: today('Pacific/Kiritimati').minus({ days: 1 }).toISODate(),
    });
  });
});
