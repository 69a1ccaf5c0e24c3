// Jobs that nobody announced to this process (another process's relay sent them, or pg-boss gave back a dead
// process's) are found by the poll every WEBHOOK_POLL_MS, while attempts are under way. Here the jobs are committed
// with their deliveries in one transaction through another pool, as another process's relay would send them, so this
// process's relay never sees them parked and wakes no one. Each receiver hangs, so an attempt holds its slot: the
// first job is sent alone and taken first, so that the later ones must be found while an attempt is under way; were
// the jobs taken one after another, only one receiver would have a request within the bound.
import assert from 'node:assert/strict';
import type { Db } from '../../../db/connect.ts';
import { emitEvent } from '../../../services/events/emit.ts';
import type { WebhookConfig } from '../../../services/webhooks/delivery-config.ts';
import { DELIVERY_LIMITS } from '../../../services/webhooks/gate.ts';
import { dispatchAccount, scheduleDelivery } from '../../../services/webhooks/queue.ts';
import { exampleEvents, insertStudent } from './fixtures.ts';
import { deliveryRig } from './rig.ts';

/** An attempt outlasts the test's bound, so a hanging receiver keeps its worker busy throughout. */
const config: WebhookConfig = {
  allowPrivateTargets: true,
  attemptTimeoutMs: 10_000,
  retryScale: 1,
  pollMs: 500,
  attemptsPerProcess: 200,
};
const ACCOUNTS = 4;
/** The poll's interval and a loaded machine's slack. */
const WITHIN_MS = 4_000;

describe('webhook jobs found by a poll', function () {
  this.timeout(60_000);
  const rig = deliveryRig(config);
  let writer: Db;
  before(() => {
    writer = rig.anotherPool();
  });

  /** A delivery of a new event to `endpointId`, parked and given its job in one transaction, as another process does it. */
  const sendJobElsewhere = (studentId: string, endpointId: string) =>
    writer.transaction().execute(async (trx) => {
      const now = new Date();
      const eventId = await emitEvent(trx, {
        type: 'task.created',
        studentId,
        data: exampleEvents().get('task.created')!.data as never,
        at: now,
      });
      await trx.updateTable('events').set({ fanned_out_at: now }).where('id', '=', eventId).execute();
      await scheduleDelivery(trx, { eventId, endpointId }, now);
      return dispatchAccount(
        trx,
        { user_id: studentId },
        { limits: DELIVERY_LIMITS, leaseMs: config.attemptTimeoutMs + 5_000, now },
      );
    });

  it('are worked side by side while an attempt is under way', async () => {
    const accounts = await Promise.all(
      Array.from({ length: ACCOUNTS }, async () => {
        const studentId = await insertStudent(writer);
        const receiver = await rig.receiver('hang');
        const endpoint = await rig.endpoint({ user_id: studentId }, receiver, ['task.created'], { db: writer });
        return { studentId, receiver, endpoint };
      }),
    );
    const worker = rig.work();
    // Its start: the first sweep and the first fetch find nothing. Its relay's first pass has ended, and a second
    // one, a poll later: the start's sweep and fetch run beside the first.
    await worker.passes.passAfter(0);
    await worker.passes.passAfter();

    const [first, ...later] = accounts;
    assert.equal(await sendJobElsewhere(first!.studentId, first!.endpoint.id), 1);
    await first!.receiver.waitFor(1, WITHIN_MS);
    for (const { studentId, endpoint } of later) assert.equal(await sendJobElsewhere(studentId, endpoint.id), 1);
    await Promise.all(later.map(({ receiver }) => receiver.waitFor(1, WITHIN_MS)));
    assert.deepEqual(
      accounts.map(({ receiver }) => receiver.inFlight),
      accounts.map(() => 1),
      'every attempt is in flight at once',
    );
  });
});
