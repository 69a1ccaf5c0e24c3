// db/queries/open-streams.ts on the run's engine: the bound on an account's live streams (concurrent opens included),
// the wait until a place frees, lapsed leases freeing their places, a credential that no longer stands, and the
// places of a grant's streams freed with it.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  closeStream,
  openStreamIfRoom,
  openStreamsOfGrants,
  releaseStreamsOfGrants,
  renewStreams,
  type OpenStreamRow,
} from '../../db/queries/open-streams.ts';
import { db, deleteNewStudents, newAppGrant, newStudent } from '../support/query-fixture.ts';

const stream = (userId: string, grantId: string | null = null): OpenStreamRow => ({
  id: randomUUID(),
  user_id: userId,
  kind: 'readiness',
  grant_id: grantId,
  key_id: null,
});
const stands = async () => true;
const LEASE_MS = 30_000;

describe('open stream queries', () => {
  after(deleteNewStudents);

  it('opens up to the bound per account, however many opens run at once, and says how long until a place frees', async () => {
    const student = await newStudent();
    const limits = { max: 3, leaseMs: LEASE_MS };
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, () => openStreamIfRoom(db(), stream(student), limits, stands)),
    );
    assert.equal(outcomes.filter((o) => 'opened' in o).length, 3);
    for (const refused of outcomes.filter((o) => 'refused' in o))
      assert.ok(refused.retryAfterMs > LEASE_MS - 10_000 && refused.retryAfterMs <= LEASE_MS, JSON.stringify(refused));
    assert.deepEqual(
      await openStreamIfRoom(db(), stream(await newStudent()), limits, stands),
      { opened: true },
      "another account's bound is its own",
    );
  });

  it('frees the place of a closed stream and of a lapsed lease, and renews only the streams still open', async () => {
    const student = await newStudent();
    const [kept, closed, lapsing] = [stream(student), stream(student), stream(student)];
    await openStreamIfRoom(db(), kept, { max: 3, leaseMs: LEASE_MS }, stands);
    await openStreamIfRoom(db(), closed, { max: 3, leaseMs: LEASE_MS }, stands);
    await openStreamIfRoom(db(), lapsing, { max: 3, leaseMs: 100 }, stands);
    assert.ok('refused' in (await openStreamIfRoom(db(), stream(student), { max: 3, leaseMs: LEASE_MS }, stands)));

    await closeStream(db(), closed.id);
    assert.deepEqual(await openStreamIfRoom(db(), stream(student), { max: 3, leaseMs: LEASE_MS }, stands), {
      opened: true,
    });
    await sleep(150);
    assert.deepEqual(await openStreamIfRoom(db(), stream(student), { max: 3, leaseMs: LEASE_MS }, stands), {
      opened: true,
    });
    assert.deepEqual(await renewStreams(db(), [kept.id, closed.id, lapsing.id], LEASE_MS), new Set([kept.id]));
  });

  it('refuses a credential that no longer stands, without taking a place', async () => {
    const student = await newStudent();
    assert.deepEqual(await openStreamIfRoom(db(), stream(student), { max: 1, leaseMs: LEASE_MS }, async () => false), {
      unauthorized: true,
    });
    assert.deepEqual(await openStreamIfRoom(db(), stream(student), { max: 1, leaseMs: LEASE_MS }, stands), {
      opened: true,
    });
  });

  it('counts and frees only the streams of the grants named', async () => {
    const student = await newStudent();
    const { grantId } = await newAppGrant(student, ['exams:read']);
    const { grantId: otherGrant } = await newAppGrant(student, ['exams:read']);
    const limits = { max: 5, leaseMs: LEASE_MS };
    for (const grant of [grantId, grantId, otherGrant, null])
      await openStreamIfRoom(db(), stream(student, grant), limits, stands);

    assert.equal(await openStreamsOfGrants(db(), [grantId]), 2);
    assert.equal(await openStreamsOfGrants(db(), []), 0);
    assert.equal(await releaseStreamsOfGrants(db(), [grantId]), 2);
    assert.equal(await openStreamsOfGrants(db(), [grantId, otherGrant]), 1);
  });
});
