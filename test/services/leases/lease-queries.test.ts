// db/queries/account-leases.ts on the run's engine: the bound on an account's live leases of a kind (concurrent takes
// included), the bound per group, the wait until a place frees, lapsed leases freeing their places and never coming
// back, a credential that no longer stands, and the places of a grant's leases freed with it.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  leasesOfGrants,
  releaseLease,
  releaseLeasesOfGrants,
  renewLeases,
  takeLeaseIfRoom,
  type LeaseRow,
} from '../../../db/queries/account-leases.ts';
import { db, deleteNewStudents, newAppGrant, newStudent } from '../../support/query-fixture.ts';

const lease = (userId: string, options: { grantId?: string | null; kind?: string; grp?: string } = {}): LeaseRow => ({
  id: randomUUID(),
  user_id: userId,
  kind: options.kind ?? 'stream',
  grp: options.grp ?? null,
  grant_id: options.grantId ?? null,
  key_id: null,
});
const stands = async () => true;
const LEASE_MS = 30_000;
const bound = (limit: number, leaseMs = LEASE_MS, perGroup?: number) => ({ limit, leaseMs, perGroup });

describe('account lease queries', () => {
  after(deleteNewStudents);

  it('takes up to the bound per account and kind, however many takes run at once, and says how long until a place frees', async () => {
    const student = await newStudent();
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, () => takeLeaseIfRoom(db(), lease(student), bound(3), stands)),
    );
    assert.equal(outcomes.filter((o) => 'taken' in o).length, 3);
    for (const refused of outcomes.filter((o) => 'refused' in o)) {
      assert.equal(refused.refused, 'account');
      assert.ok(refused.retryAfterMs > LEASE_MS - 10_000 && refused.retryAfterMs <= LEASE_MS, JSON.stringify(refused));
    }
    const taken = { taken: true };
    assert.deepEqual(await takeLeaseIfRoom(db(), lease(student, { kind: 'export' }), bound(1), stands), taken);
    assert.deepEqual(await takeLeaseIfRoom(db(), lease(await newStudent()), bound(3), stands), taken);
  });

  it('holds a group to its own bound within the account’s', async () => {
    const student = await newStudent();
    const inGroup = (grp: string) =>
      takeLeaseIfRoom(db(), lease(student, { kind: 'ai_reply', grp }), bound(2, LEASE_MS, 1), stands);
    const first = await Promise.all([inGroup('a'), inGroup('a'), inGroup('a')]);
    assert.equal(first.filter((o) => 'taken' in o).length, 1);
    assert.ok(
      first.every((o) => 'taken' in o || ('refused' in o && o.refused === 'group')),
      JSON.stringify(first),
    );
    assert.deepEqual(await inGroup('b'), { taken: true });
    const third = await inGroup('c');
    assert.ok('refused' in third && third.refused === 'account', 'the account holds its 2 leases of the kind');
  });

  it('frees the place of a released and of a lapsed lease, and renews only the live ones', async () => {
    const student = await newStudent();
    const [kept, released, lapsing] = [lease(student), lease(student), lease(student)];
    await takeLeaseIfRoom(db(), kept, bound(3), stands);
    await takeLeaseIfRoom(db(), released, bound(3), stands);
    await takeLeaseIfRoom(db(), lapsing, bound(3, 100), stands);
    assert.ok('refused' in (await takeLeaseIfRoom(db(), lease(student), bound(3), stands)));

    await releaseLease(db(), released.id);
    assert.deepEqual(await takeLeaseIfRoom(db(), lease(student), bound(3), stands), { taken: true });
    await sleep(150);
    assert.deepEqual(await takeLeaseIfRoom(db(), lease(student), bound(3), stands), { taken: true });
    assert.deepEqual(
      await renewLeases(db(), [kept.id, released.id, lapsing.id], LEASE_MS),
      new Set([kept.id]),
      'a lapsed lease, whose place was taken again, is not renewed',
    );
  });

  it('refuses a credential that no longer stands, without taking a place', async () => {
    const student = await newStudent();
    assert.deepEqual(await takeLeaseIfRoom(db(), lease(student), bound(1), async () => false), { unauthorized: true });
    assert.deepEqual(await takeLeaseIfRoom(db(), lease(student), bound(1), stands), { taken: true });
  });

  it('counts and frees only the leases of the grants named', async () => {
    const student = await newStudent();
    const { grantId } = await newAppGrant(student, ['exams:read']);
    const { grantId: otherGrant } = await newAppGrant(student, ['exams:read']);
    for (const grant of [grantId, grantId, otherGrant, null])
      await takeLeaseIfRoom(db(), lease(student, { grantId: grant }), bound(5), stands);

    assert.equal(await leasesOfGrants(db(), [grantId]), 2);
    assert.equal(await leasesOfGrants(db(), []), 0);
    assert.equal(await releaseLeasesOfGrants(db(), [grantId]), 2);
    assert.equal(await leasesOfGrants(db(), [grantId, otherGrant]), 1);
  });
});
