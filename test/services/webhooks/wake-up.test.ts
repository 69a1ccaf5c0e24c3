// Webhook delivery is woken by the commit, not by its poll: with WEBHOOK_POLL_MS at a minute, an event committed
// through another connection (on PostgreSQL another pool, as another process would) is attempted within seconds, and so
// is a re-send. The control: the same worker without the notifications waits for its poll. Bounds are generous (seconds
// against a minute's poll): they prove the mechanism, the bench measures the speed (scripts/bench/event-latency.ts).
import assert from 'node:assert/strict';
import type { Db } from '../../../db/connect.ts';
import type { WebhookConfig } from '../../../services/webhooks/delivery-config.ts';
import { resendDelivery } from '../../../services/webhooks/queue.ts';
import { emitExample, insertStudent } from './fixtures.ts';
import { deliveryRig } from './rig.ts';

/** A poll far longer than any bound below: what arrives within them was not fetched by a poll. */
const config: WebhookConfig = {
  allowPrivateTargets: true,
  attemptTimeoutMs: 5_000,
  retryScale: 1,
  pollMs: 60_000,
  attemptsPerProcess: 200,
};
/** Seconds on a loaded machine, against a minute's poll. */
const WITHIN_MS = 3_000;

describe('webhook delivery wakes on the commit', function () {
  this.timeout(60_000);
  const rig = deliveryRig(config);
  /** The worker's connection; events are written through `writer` (another pool on PostgreSQL). */
  let db: Db;
  let writer: Db;
  before(() => {
    db = rig.db;
    writer = rig.anotherPool();
  });

  /** A receiver, an endpoint of a new student's for task.created, and a worker (woken by notifications or not). */
  async function setUp(woken: boolean) {
    const studentId = await insertStudent(writer);
    const receiver = await rig.receiver();
    const endpoint = await rig.endpoint({ user_id: studentId }, receiver, ['task.created'], { db: writer });
    rig.work({ woken });
    // The worker's first pass (at its start) finds nothing; wait until it has gone idle on its minute-long poll.
    await new Promise((resolve) => setTimeout(resolve, 500));
    return { studentId, receiver, endpoint };
  }

  it('attempts an event committed through another connection within seconds, with a poll of a minute', async () => {
    const { studentId, receiver } = await setUp(true);
    for (const round of [1, 2]) {
      const committedAt = Date.now();
      const eventId = await emitExample(writer, 'task.created', studentId);
      const [received] = (await receiver.waitFor(round, WITHIN_MS)).slice(-1);
      assert.equal(received!.webhookId, eventId);
      assert.equal(received!.verifiedWith, 0);
      assert.ok(received!.receivedAt.getTime() - committedAt < WITHIN_MS);
    }
  });

  it('attempts a re-sent delivery within seconds too', async () => {
    const { studentId, receiver, endpoint } = await setUp(true);
    const eventId = await emitExample(writer, 'task.created', studentId);
    await receiver.waitFor(1, WITHIN_MS);
    const delivery = await db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('endpoint_id', '=', endpoint.id)
      .executeTakeFirstOrThrow();
    // Recorded as succeeded before the re-send, so the re-send is what makes the second attempt.
    const deadline = Date.now() + WITHIN_MS;
    while (
      (
        await db
          .selectFrom('webhook_deliveries')
          .select('status')
          .where('id', '=', delivery.id)
          .executeTakeFirstOrThrow()
      ).status !== 'succeeded'
    ) {
      assert.ok(Date.now() < deadline, 'the first attempt was recorded');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    assert.equal(await writer.transaction().execute((trx) => resendDelivery(trx, delivery.id)), true);
    const received = await receiver.waitFor(2, WITHIN_MS);
    assert.deepEqual(
      received.map((r) => r.webhookId),
      [eventId, eventId],
    );
  });

  it('without the notifications, the same worker leaves the event to its poll (the control)', async () => {
    const { studentId, receiver } = await setUp(false);
    await emitExample(writer, 'task.created', studentId);
    await assert.rejects(receiver.waitFor(1, WITHIN_MS), 'nothing is attempted before the poll');
  });
});
