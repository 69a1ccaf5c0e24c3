// db/queries/xp.ts on the run's engine: each award counts once (retries and races included), reviews and tasks share
// one cap per local day, and readiness milestones are outside it.
import assert from 'node:assert/strict';
import { awardXp } from '../../../db/queries/xp.ts';
import { DAILY_CAP, type XpClaim } from '../../../domain/xp.ts';
import { db, deleteNewStudents, newStudent } from '../../support/query-fixture.ts';

const award = (userId: string, claim: XpClaim) =>
  db()
    .transaction()
    .execute((trx) => awardXp(trx, userId, claim, new Date()));
const xpOf = async (userId: string) =>
  (await db().selectFrom('users').select('xp').where('id', '=', userId).executeTakeFirstOrThrow()).xp;
const claim = (key: string, source: XpClaim['source'], amount: number, localDate = '2026-03-02'): XpClaim => ({
  key,
  source,
  amount,
  localDate,
});

describe('xp queries', () => {
  after(deleteNewStudents);

  it('awards a thing once, whether asked again later or by many at once', async () => {
    const student = await newStudent();
    assert.equal(await award(student, claim('task:a', 'task', 10)), 10);
    assert.equal(await award(student, claim('task:a', 'task', 10)), 0);
    const raced = await Promise.all(Array.from({ length: 6 }, () => award(student, claim('review:b', 'review', 3))));
    assert.deepEqual([...raced].sort(), [0, 0, 0, 0, 0, 3]);
    assert.equal(await xpOf(student), 13);
    assert.equal(
      await award(await newStudent(), claim('task:a', 'task', 10)),
      10,
      "another student's ledger is its own",
    );
  });

  it('caps reviews and tasks together per local day, cuts the award that crosses the cap, and leaves milestones uncapped', async () => {
    const student = await newStudent();
    const tasks = Math.floor((DAILY_CAP - 1) / 10); // the cap less than one task away
    for (let n = 0; n < tasks; n++) assert.equal(await award(student, claim(`task:${n}`, 'task', 10)), 10);
    assert.equal(await award(student, claim('review:x', 'review', 50)), DAILY_CAP - tasks * 10);
    assert.equal(await award(student, claim('review:y', 'review', 3)), 0);
    assert.equal(await award(student, claim('readiness:e:50', 'readiness', 20)), 20);
    assert.equal(
      await award(student, claim('review:z', 'review', 3, '2026-03-03')),
      3,
      'the next local day has its own cap',
    );
    assert.equal(await xpOf(student), DAILY_CAP + 20 + 3);
  });

  it('records a claim that earned nothing, so it cannot earn later', async () => {
    const student = await newStudent();
    assert.equal(await award(student, claim('task:late', 'task', 0)), 0);
    assert.equal(await award(student, claim('task:late', 'task', 10)), 0);
    assert.equal(await xpOf(student), 0);
  });
});
