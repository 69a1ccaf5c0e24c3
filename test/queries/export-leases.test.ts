// db/queries/export-leases.ts on the run's engine: one export lease per student; only its holder renews or ends it,
// another holder is told when it expires, and an expired lease goes to the next holder, its old holder losing it.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { releaseExportLease, renewExportLease, takeExportLease } from '../../db/queries/export-leases.ts';
import { db, deleteNewStudents, newStudent } from '../support/query-fixture.ts';

/** Holders are download ids. */
const [a, b, crashed, next, third] = [randomUUID(), randomUUID(), randomUUID(), randomUUID(), randomUUID()];

describe('export lease queries', () => {
  after(deleteNewStudents);

  it('refuses a second holder with the seconds left, and lets only the holder renew or end the lease', async () => {
    const student = await newStudent();
    assert.deepEqual(await takeExportLease(db(), student, a, 30), { taken: true });
    const refused = await takeExportLease(db(), student, b, 30);
    assert.ok(
      !refused.taken && refused.retryAfterSeconds >= 29 && refused.retryAfterSeconds <= 30,
      JSON.stringify(refused),
    );
    assert.deepEqual(
      await takeExportLease(db(), await newStudent(), b, 30),
      { taken: true },
      "another student's export is its own",
    );

    assert.equal(await renewExportLease(db(), student, b, 30), false);
    await releaseExportLease(db(), student, b);
    assert.equal((await takeExportLease(db(), student, b, 30)).taken, false);
    assert.equal(await renewExportLease(db(), student, a, 30), true);
    await releaseExportLease(db(), student, a);
    assert.deepEqual(await takeExportLease(db(), student, b, 30), { taken: true });
  });

  it('gives an expired lease to the next holder; the old holder can then neither renew nor end it', async () => {
    const student = await newStudent();
    assert.deepEqual(await takeExportLease(db(), student, crashed, 0.2), { taken: true });
    assert.deepEqual(await takeExportLease(db(), student, next, 30), { taken: false, retryAfterSeconds: 1 });
    await sleep(300);
    assert.deepEqual(await takeExportLease(db(), student, next, 30), { taken: true });
    assert.equal(await renewExportLease(db(), student, crashed, 30), false);
    await releaseExportLease(db(), student, crashed);
    assert.equal((await takeExportLease(db(), student, third, 30)).taken, false);
  });
});
