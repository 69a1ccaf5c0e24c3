// A delivery made while its endpoint's lease is being released is not left parked. The ending attempt's transaction
// holds the account's lock, frees the lease and dispatches what it sees, before the new delivery is committed; the
// relay's pass then makes the delivery and sweeps while that transaction is still open, so its account query still
// sees the lease held. The pass dispatches the account it fanned out for under the lock anyway, after the ending
// attempt commits, and gives the delivery its job. (CI once caught the gap: the delivery waited for the poll.)
// PostgreSQL only: the two transactions must overlap, and embedded PGlite runs one at a time.
import assert from 'node:assert/strict';
import { lockAccountGates, releaseLease } from '../../../db/queries/endpoint-gates.ts';
import type { WebhookConfig } from '../../../services/webhooks/delivery-config.ts';
import { relayPass } from '../../../services/webhooks/fan-out.ts';
import { DELIVERY_LIMITS } from '../../../services/webhooks/gate.ts';
import { dispatchAccount } from '../../../services/webhooks/queue.ts';
import { emitExample, insertStudent } from './fixtures.ts';
import { deliveryRig } from './rig.ts';

const config: WebhookConfig = {
  allowPrivateTargets: true,
  attemptTimeoutMs: 5_000,
  retryScale: 1,
  pollMs: 60_000,
  attemptsPerProcess: 200,
};
const sweep = { limits: DELIVERY_LIMITS, leaseMs: 10_000 };

describe('a delivery made while its endpoint is released', function () {
  this.timeout(30_000);
  const rig = deliveryRig(config);

  it('gets its job from the pass that made it, once the ending attempt commits', async function () {
    if (!process.env.DATABASE_URL) this.skip(); // needs two transactions at once
    const db = rig.db;
    const ending = rig.anotherPool();
    const studentId = await insertStudent(db);
    const account = { user_id: studentId };
    const endpoint = await rig.endpoint(account, await rig.receiver(), ['task.created']);
    const lease = () =>
      db
        .selectFrom('webhook_endpoint_gates')
        .select('lease_job')
        .where('endpoint_id', '=', endpoint.id)
        .executeTakeFirst();

    // The first delivery gets its job and the endpoint's lease (no worker runs: nothing is attempted).
    await emitExample(db, 'task.created', studentId);
    assert.equal((await relayPass(db, sweep)).sent, 1);
    const firstJob = (await lease())?.lease_job;
    assert.ok(firstJob, 'the first delivery holds the lease');

    // Its attempt ends: the delivery succeeded, the lease is freed and the account dispatched, in a transaction left
    // open.
    let commit!: () => void;
    const committing = new Promise<void>((resolve) => (commit = resolve));
    let attemptLocked!: () => void;
    const locked = new Promise<void>((resolve) => (attemptLocked = resolve));
    const attemptEnds = ending.transaction().execute(async (trx) => {
      await lockAccountGates(trx, account);
      await trx
        .updateTable('webhook_deliveries')
        .set({ status: 'succeeded', next_attempt_at: null, succeeded_at: new Date() })
        .where('endpoint_id', '=', endpoint.id)
        .execute();
      await releaseLease(trx, endpoint.id, firstJob);
      assert.equal(
        await dispatchAccount(trx, account, { ...sweep, now: new Date() }),
        0,
        'nothing else is waiting yet',
      );
      attemptLocked();
      await committing;
    });
    await Promise.race([locked, attemptEnds]);

    // Meanwhile the next event is committed and a pass runs; it cannot finish while the attempt holds the lock.
    await emitExample(db, 'task.created', studentId);
    let passEnded = false;
    const pass = relayPass(db, sweep).finally(() => (passEnded = true));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const waited = !passEnded;
    commit();
    await attemptEnds;
    assert.ok(waited, "the pass waits for the account's lock");

    assert.equal((await pass).sent, 1, 'the pass gave the new delivery its job');
    const secondJob = (await lease())?.lease_job;
    assert.ok(secondJob && secondJob !== firstJob, 'the new delivery holds the lease');
  });
});
