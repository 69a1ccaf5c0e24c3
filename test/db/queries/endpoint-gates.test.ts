// db/queries/endpoint-gates.ts on the run's engine: an endpoint's lease belongs to one job, an account's live leases
// are counted from its own gates only, the breaker opens and closes with the run of failures, and a parked delivery
// may go only through a gate that lets it (no live lease, breaker closed), oldest due first, one per endpoint.
import assert from 'node:assert/strict';
import type { Db } from '../../../db/connect.ts';
import { upsertDelivery } from '../../../db/queries/deliveries.ts';
import {
  accountLeases,
  accountsWithRunnableDeliveries,
  countAccountLeases,
  readGate,
  releaseLease,
  reserveEndpoint,
  runnableDeliveries,
  settleGate,
  takeLease,
  type GateAccount,
} from '../../../db/queries/endpoint-gates.ts';
import { db, deleteNewStudents, newEndpoint, newEvent, newStudent } from '../../support/query-fixture.ts';

const NOW = new Date('2026-03-02T12:00:00Z');
const seconds = (n: number) => new Date(NOW.getTime() + n * 1000);
const inTransaction = <T>(work: (trx: Db) => Promise<T>) => db().transaction().execute(work);

/** A student with `count` endpoints; the account and the endpoints' ids. */
async function accountWithEndpoints(
  count: number,
): Promise<{ account: GateAccount; userId: string; endpoints: string[] }> {
  const userId = await newStudent();
  const endpoints: string[] = [];
  for (let n = 0; n < count; n++) endpoints.push(await newEndpoint({ user_id: userId }, ['task.created']));
  return { account: { user_id: userId }, userId, endpoints };
}

describe('endpoint gate queries', () => {
  after(deleteNewStudents);

  it("counts an account's live leases on its other endpoints, and ends a lease only for the job holding it", async () => {
    const { account, endpoints } = await accountWithEndpoints(3);
    const [e1, e2, e3] = endpoints as [string, string, string];
    const stranger = await accountWithEndpoints(1);
    await inTransaction(async (trx) => {
      assert.deepEqual(await readGate(trx, e1, account), {
        lease_job: null,
        lease_until: null,
        failures: 0,
        open_until: null,
      });
      await takeLease(trx, e1, 'job-1', seconds(10));
      await reserveEndpoint(trx, e2, account, 'job-2', seconds(20));
      await reserveEndpoint(trx, e3, account, 'job-3', NOW); // ends now: not live
      await reserveEndpoint(trx, stranger.endpoints[0]!, stranger.account, 'job-4', seconds(5));
    });

    assert.deepEqual(await accountLeases(db(), account, e1, NOW), { count: 1, firstEnd: seconds(20) });
    assert.deepEqual(await accountLeases(db(), account, e3, NOW), { count: 2, firstEnd: seconds(10) });
    assert.equal(await countAccountLeases(db(), account, NOW), 2);
    assert.equal(await countAccountLeases(db(), account, seconds(10)), 1);

    await releaseLease(db(), e1, 'job-superseded');
    await settleGate(db(), e1, 'job-superseded', { succeeded: true, openUntil: () => null });
    assert.equal((await readGate(db(), e1, account)).lease_job, 'job-1');
    await settleGate(db(), e1, 'job-1', { succeeded: true, openUntil: () => null });
    assert.deepEqual(await readGate(db(), e1, account), {
      lease_job: null,
      lease_until: null,
      failures: 0,
      open_until: null,
    });
  });

  it('opens the breaker when the run of failures says so, and a success closes it and clears the run', async () => {
    const { account, endpoints } = await accountWithEndpoints(1);
    const endpoint = endpoints[0]!;
    const openAfterTwo = (failures: number) => (failures >= 2 ? seconds(60 * failures) : null);
    const fail = () => settleGate(db(), endpoint, 'job', { succeeded: false, openUntil: openAfterTwo });
    await readGate(db(), endpoint, account);
    assert.deepEqual(await fail(), { failures: 1, open_until: null });
    assert.deepEqual(await fail(), { failures: 2, open_until: seconds(120) });
    assert.deepEqual(await fail(), { failures: 3, open_until: seconds(180) });
    assert.equal((await readGate(db(), endpoint, account)).open_until?.getTime(), seconds(180).getTime());
    assert.deepEqual(await settleGate(db(), endpoint, 'job', { succeeded: true, openUntil: openAfterTwo }), {
      failures: 0,
      open_until: null,
    });
    assert.deepEqual(await readGate(db(), endpoint, account), {
      lease_job: null,
      lease_until: null,
      failures: 0,
      open_until: null,
    });
  });

  it('lets parked deliveries go oldest first, one per endpoint, only through a gate with no live lease and a closed breaker', async () => {
    const { account, userId, endpoints } = await accountWithEndpoints(4);
    const [free, leased, broken, lapsed] = endpoints as [string, string, string, string];
    const delivery = async (endpoint: string, dueIn: number) =>
      (
        await upsertDelivery(db(), {
          event_id: await newEvent(userId, 'task.created'),
          endpoint_id: endpoint,
          at: seconds(dueIn),
        })
      ).id;
    const freeOlder = await delivery(free, -30);
    await delivery(free, -10);
    await delivery(free, 10); // not due
    await delivery(leased, -60);
    await delivery(broken, -60);
    const lapsedOne = await delivery(lapsed, -20);
    await inTransaction(async (trx) => {
      await reserveEndpoint(trx, leased, account, 'job-l', seconds(5));
      await reserveEndpoint(trx, lapsed, account, 'job-x', NOW);
      await readGate(trx, broken, account);
      await settleGate(trx, broken, 'job-b', { succeeded: false, openUntil: () => seconds(1) });
    });

    assert.deepEqual(
      (await runnableDeliveries(db(), account, NOW, 10)).map((d) => d.id),
      [freeOlder, lapsedOne],
    );
    assert.deepEqual(
      (await runnableDeliveries(db(), account, NOW, 1)).map((d) => d.id),
      [freeOlder],
    );
    assert.equal((await runnableDeliveries(db(), account, seconds(5), 10)).length, 4);
  });

  it('names an account with a runnable delivery only while it holds fewer live leases than its share', async () => {
    const { account, userId, endpoints } = await accountWithEndpoints(3);
    const [waiting, busyA, busyB] = endpoints as [string, string, string];
    await upsertDelivery(db(), {
      event_id: await newEvent(userId, 'task.created'),
      endpoint_id: waiting,
      at: seconds(-1),
    });
    const named = async (perAccount: number) =>
      (await accountsWithRunnableDeliveries(db(), NOW, perAccount, 10_000)).some(
        (a) => 'user_id' in a && a.user_id === userId,
      );
    assert.equal(await named(2), true);
    await inTransaction(async (trx) => {
      await reserveEndpoint(trx, busyA, account, 'job-a', seconds(30));
      await reserveEndpoint(trx, busyB, account, 'job-b', seconds(30));
    });
    assert.equal(await named(2), false);
    assert.equal(await named(3), true);
  });
});
