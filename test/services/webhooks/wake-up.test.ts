// Webhook delivery is woken by the commit, not by its poll: with WEBHOOK_POLL_MS at a minute, an event committed
// through another connection (on PostgreSQL another pool, as another process would) is attempted before the poll
// could have fired, and so is a re-send. The control: the same worker without the notifications leaves the event to
// its poll, a pass that begins a whole poll's interval after the one before it. The passes are watched through the
// worker's lifecycle (relay-passes.ts), so the bounds are the poll's own interval, not a guess at the machine's speed;
// the bench measures the speed (scripts/bench/event-latency.ts).
import assert from 'node:assert/strict';
import type { Db } from '../../../db/connect.ts';
import type { WebhookConfig } from '../../../services/webhooks/delivery-config.ts';
import { resendDelivery } from '../../../services/webhooks/queue.ts';
import { emitExample, insertStudent } from './fixtures.ts';
import type { Receiver } from './receiver.ts';
import type { Pass } from './relay-passes.ts';
import { deliveryRig, type WorkerUnderTest } from './rig.ts';

/** A poll far longer than the woken worker needs, on any machine: what arrives before it was not fetched by a poll. */
const POLL_MS = 60_000;
/** The control's poll: long beside a pass and a commit, short enough to wait for. */
const CONTROL_POLL_MS = 1_500;
const config: WebhookConfig = {
  allowPrivateTargets: true,
  attemptTimeoutMs: 5_000,
  retryScale: 1,
  pollMs: POLL_MS,
  attemptsPerProcess: 200,
};

/** A performance.now() reading as a time of day, to compare with what the receiver stamped. */
const wallTime = (at: number) => performance.timeOrigin + at;

describe('webhook delivery wakes on the commit', function () {
  this.timeout(2 * POLL_MS);
  const rig = deliveryRig(config);
  /** The worker's connection; events are written through `writer` (another pool on PostgreSQL). */
  let db: Db;
  let writer: Db;
  before(() => {
    db = rig.db;
    writer = rig.anotherPool();
  });

  /**
   * A receiver, an endpoint of a new student's for task.created, and a worker (woken by notifications or not) whose
   * first pass (at its start, finding nothing) has ended: from then on its relay waits for its poll or a wake-up.
   */
  async function setUp(woken: boolean, pollMs = POLL_MS) {
    const studentId = await insertStudent(writer);
    const receiver = await rig.receiver();
    const endpoint = await rig.endpoint({ user_id: studentId }, receiver, ['task.created'], { db: writer });
    const worker = rig.work({ woken, config: { pollMs } });
    await worker.passes.passAfter(0);
    return { studentId, receiver, endpoint, worker };
  }

  /**
   * The `count`th request, which must arrive before the worker's poll could have fired: `pollMs` after the last pass
   * that had ended when the change was committed (the relay sets its poll's timer at the end of every pass).
   */
  async function beforeThePoll(worker: WorkerUnderTest, receiver: Receiver, count: number, last: Pass) {
    const pollDue = last.endedAt + POLL_MS;
    const received = (await receiver.waitFor(count, pollDue - performance.now())).at(-1)!;
    assert.ok(
      received.receivedAt.getTime() < wallTime(pollDue),
      `attempted ${received.receivedAt.getTime() - wallTime(last.endedAt)} ms after the last pass, before the poll`,
    );
    assert.ok(worker.passes.ended.length >= 2, 'a pass woken by the commit, after the first one');
    return received;
  }

  it('attempts an event committed through another connection before its poll, with a poll of a minute', async () => {
    const { studentId, receiver, worker } = await setUp(true);
    for (const round of [1, 2]) {
      const last = worker.passes.ended.at(-1)!;
      const eventId = await emitExample(writer, 'task.created', studentId);
      const received = await beforeThePoll(worker, receiver, round, last);
      assert.equal(received.webhookId, eventId);
      assert.equal(received.verifiedWith, 0);
    }
  });

  it('attempts a re-sent delivery before its poll too', async () => {
    const { studentId, receiver, endpoint, worker } = await setUp(true);
    const eventId = await emitExample(writer, 'task.created', studentId);
    await beforeThePoll(worker, receiver, 1, worker.passes.ended.at(-1)!);
    const delivery = await db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('endpoint_id', '=', endpoint.id)
      .executeTakeFirstOrThrow();
    // Recorded as succeeded before the re-send, so the re-send is what makes the second attempt.
    const deadline = Date.now() + 30_000;
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
    const last = worker.passes.ended.at(-1)!;
    assert.equal(await writer.transaction().execute((trx) => resendDelivery(trx, delivery.id)), true);
    await beforeThePoll(worker, receiver, 2, last);
    assert.deepEqual(
      receiver.received.map((r) => r.webhookId),
      [eventId, eventId],
    );
  });

  it('without the notifications, the same worker leaves the event to its poll (the control)', async () => {
    const { studentId, receiver, worker } = await setUp(false, CONTROL_POLL_MS);
    const last = worker.passes.ended.at(-1)!;
    const committed = performance.now();
    await emitExample(writer, 'task.created', studentId);
    const [received] = await receiver.waitFor(1, 30_000);
    // The pass that fanned the event out began after the commit; nothing began between the last pass and the poll.
    const fannedOut = worker.passes.ended.find((pass) => pass.startedAt >= committed)!;
    assert.equal(
      worker.passes.ended.indexOf(fannedOut),
      worker.passes.ended.indexOf(last) + 1,
      'no pass between the last one and the poll',
    );
    assert.ok(
      fannedOut.startedAt - last.endedAt >= CONTROL_POLL_MS - 1,
      `nothing is attempted before the poll: the next pass began ${Math.round(fannedOut.startedAt - last.endedAt)} ms after the last`,
    );
    assert.ok(received!.receivedAt.getTime() >= Math.floor(wallTime(fannedOut.startedAt)) - 1);
  });
});
