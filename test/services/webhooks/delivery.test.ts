// Webhook delivery end to end, in process, on a database of its own: events fanned out from the outbox to the
// endpoints that want them, sent to a real receiver on loopback that verifies every signature with the
// `standardwebhooks` library, payloads checked against the spec, failures retried with the same webhook-id, a
// failing endpoint disabled, apps' deliveries bound to their grants, and two workers never making one attempt twice.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Db } from '../../../db/connect.ts';
import { upsertDelivery } from '../../../db/queries/deliveries.ts';
import { revokeGrant } from '../../../db/queries/oauth.ts';
import type { WebhookConfig } from '../../../services/webhooks/delivery-config.ts';
import type { EventType } from '../../../services/events/emit.ts';
import { fanOutBatch } from '../../../services/webhooks/fan-out.ts';
import { resendDelivery, scheduleDelivery } from '../../../services/webhooks/queue.ts';
import { assertEventConforms, documentedEventTypes } from '../../support/event-contract.ts';
import { sql } from 'kysely';
import { emitExample, insertAppWithGrant, insertStudent } from './fixtures.ts';
import { deliveryRig, type WorkerUnderTest } from './rig.ts';

/**
 * Loopback receivers and three days of retries compressed to about a second. Attempts may take 5 s: on a loaded
 * machine a healthy receiver's answer can take longer than a short timeout, and a timed-out attempt is retried (a
 * duplicate by design), which would blur what the exactly-once assertions check. The retry test shortens it. The
 * relay looks for retries now due every 100 ms (a fifth of the product's least WEBHOOK_POLL_MS): the compressed
 * retries are due within milliseconds, and would otherwise each wait for a poll.
 */
const config: WebhookConfig = {
  allowPrivateTargets: true,
  attemptTimeoutMs: 5_000,
  retryScale: 0.000_01,
  pollMs: 100,
  attemptsPerProcess: 200,
};
const HOUR = 3_600_000;

describe('webhook delivery', function () {
  this.timeout(60_000);
  const rig = deliveryRig(config);
  let db: Db;
  before(() => {
    db = rig.db;
  });

  const work = (overrides: Partial<WebhookConfig> = {}) => rig.work({ config: overrides });
  /** A relay pass that begins from now on has ended: whatever was committed before this call has been fanned out. */
  const aPassFromNow = (worker: WorkerUnderTest) => worker.passes.passAfter(performance.now());
  const receiver = () => rig.receiver();
  const deliveriesOf = (endpointId: string) =>
    db
      .selectFrom('webhook_deliveries')
      .select(['id', 'event_id', 'status', 'attempts', 'succeeded_at'])
      .where('endpoint_id', '=', endpointId)
      .orderBy('created_at')
      .execute();
  const attemptsOf = (deliveryId: string) =>
    db
      .selectFrom('webhook_attempts')
      .select(['response_status', 'error', 'duration_ms'])
      .where('delivery_id', '=', deliveryId)
      .orderBy('started_at')
      .execute();
  async function until<T>(
    what: string,
    read: () => Promise<T>,
    done: (value: T) => boolean,
    timeoutMs = 20_000,
  ): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await read();
      if (done(value)) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  it('delivers an event of every documented kind to the student endpoint subscribed to it, signed, as the spec describes', async () => {
    const studentId = await insertStudent(db);
    const kinds = documentedEventTypes() as EventType[];
    // One endpoint wants every kind but exam.deleted: the subscription filters.
    const hook = await receiver();
    const endpoint = await rig.endpoint(
      { user_id: studentId },
      hook,
      kinds.filter((k) => k !== 'exam.deleted'),
    );
    const other = await receiver();
    await rig.endpoint({ user_id: await insertStudent(db) }, other, kinds);
    const ids = new Map<string, EventType>();
    for (const kind of kinds) ids.set(await emitExample(db, kind, studentId), kind);
    work();

    const received = await hook.waitFor(kinds.length - 1);
    for (const delivery of received) {
      assert.equal(delivery.verifiedWith, 0, 'the signature verifies with the endpoint secret');
      assert.equal(delivery.webhookId, delivery.event.id);
      assert.equal(delivery.headers['content-type'], 'application/json');
      assertEventConforms(delivery.event);
      assert.equal(delivery.event.student_id, studentId);
      assert.equal(ids.get(delivery.event.id), delivery.event.type);
    }
    assert.deepEqual(received.map((d) => d.event.type).sort(), kinds.filter((k) => k !== 'exam.deleted').sort());
    const deliveries = await until(
      'every delivery recorded',
      () => deliveriesOf(endpoint.id),
      (rows) => rows.every((d) => d.status === 'succeeded'),
    );
    assert.equal(deliveries.length, kinds.length - 1);
    assert.ok(deliveries.every((d) => d.attempts === 1 && d.succeeded_at));
    assert.equal(other.received.length, 0, "another student's endpoint gets none of them");
    const events = await db.selectFrom('events').select('fanned_out_at').where('user_id', '=', studentId).execute();
    assert.ok(events.every((e) => e.fanned_out_at !== null));
  });

  it('retries a receiver that fails and times out, with the same webhook-id, until it accepts', async () => {
    const ATTEMPT_TIMEOUT_MS = 1_500;
    const studentId = await insertStudent(db);
    const hook = await receiver();
    const endpoint = await rig.endpoint({ user_id: studentId }, hook, ['task.completed']);
    hook.script([500, 'hang', 503], 200);
    const eventId = await emitExample(db, 'task.completed', studentId);
    // The held attempt ends at its timeout, well above what a healthy answer takes on a loaded machine: shorter, a
    // healthy answer timed out too. The three days (compressed) after which a failing endpoint is disabled are 50 s
    // here, the retries' delays still milliseconds: at the file's shorter days, the four attempts of a loaded machine
    // outlasted them and the endpoint was disabled before its success.
    work({ attemptTimeoutMs: ATTEMPT_TIMEOUT_MS, retryScale: 0.000_2 });

    const received = await hook.waitFor(4);
    assert.deepEqual(
      received.map((d) => d.webhookId),
      [eventId, eventId, eventId, eventId],
    );
    assert.ok(
      received.every((d) => d.verifiedWith === 0 && d.body === received[0]!.body),
      'every retry is the same signed body',
    );
    const [delivery] = await until(
      'the delivery to succeed',
      () => deliveriesOf(endpoint.id),
      (rows) => rows[0]?.status === 'succeeded',
    );
    assert.equal(delivery!.attempts, 4);
    const attempts = await attemptsOf(delivery!.id);
    assert.deepEqual(
      attempts.map((a) => a.response_status),
      [500, null, 503, 200],
    );
    assert.match(attempts[1]!.error!, new RegExp(`timed out after ${ATTEMPT_TIMEOUT_MS} ms`));
    assert.equal(attempts[0]!.error, 'HTTP 500');
    assert.equal(attempts[3]!.error, null);
    const row = await db
      .selectFrom('webhook_endpoints')
      .select(['failing_since', 'enabled'])
      .where('id', '=', endpoint.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.failing_since, null, 'a success ends the run of failures');
    assert.equal(row.enabled, true);
    assert.equal(received.length, 4, 'nothing more is sent after the 2xx');
  });

  it('disables an endpoint that has failed for three days (compressed) and fails its pending deliveries', async () => {
    const studentId = await insertStudent(db);
    const hook = await receiver();
    hook.script([], 500);
    const endpoint = await rig.endpoint({ user_id: studentId }, hook, ['task.created', 'task.updated']);
    await emitExample(db, 'task.created', studentId);
    await emitExample(db, 'task.updated', studentId);
    // Three days compressed to a minute, the first retries' delays to milliseconds; the relay looks every 50 ms.
    const retryScale = 0.000_2;
    const worker = work({ retryScale, pollMs: 50 });
    // Retried: four attempts fail. Then three days (compressed) pass, as the data says it: the endpoint's run of
    // failures began that long ago. The next failure disables it. (Waited out in real time, the three days raced the
    // attempts: a loaded machine made too few of them within the window.)
    await hook.waitFor(4);
    await db
      .updateTable('webhook_endpoints')
      .set({ failing_since: sql<Date>`failing_since - ${72 * HOUR * retryScale} * interval '1 millisecond'` })
      .where('id', '=', endpoint.id)
      .execute();

    const row = await until(
      'the endpoint to be disabled',
      () =>
        db
          .selectFrom('webhook_endpoints')
          .select(['enabled', 'disabled_reason', 'failing_since'])
          .where('id', '=', endpoint.id)
          .executeTakeFirstOrThrow(),
      (r) => !r.enabled,
    );
    assert.equal(row.disabled_reason, 'failing');
    assert.ok(row.failing_since);
    const deliveries = await until(
      'its deliveries to fail',
      () => deliveriesOf(endpoint.id),
      (rows) => rows.every((d) => d.status === 'failed'),
    );
    assert.equal(deliveries.length, 2);
    assert.ok(hook.received.length >= 4, `retried before giving up (${hook.received.length} attempts)`);
    const sentBefore = hook.received.length;
    const later = await emitExample(db, 'task.created', studentId);
    await aPassFromNow(worker);
    const [fannedOut] = await db.selectFrom('events').select('fanned_out_at').where('id', '=', later).execute();
    assert.ok(fannedOut?.fanned_out_at, 'the later event was fanned out');
    assert.equal((await deliveriesOf(endpoint.id)).length, 2, 'no delivery to a disabled endpoint');
    assert.equal(hook.received.length, sentBefore, 'a disabled endpoint gets nothing new');
  });

  it("delivers to an app's endpoint only what its live grant's read scopes cover, and stops when the grant is revoked", async () => {
    const studentId = await insertStudent(db);
    const { clientId, grantId } = await insertAppWithGrant(db, studentId, ['tasks:read']);
    const hook = await receiver();
    const endpoint = await rig.endpoint({ client_id: clientId }, hook, [
      'task.created',
      'task.updated',
      'exam.created',
    ]);
    const taskEvent = await emitExample(db, 'task.created', studentId);
    await emitExample(db, 'exam.created', studentId); // exams:read is not granted
    await emitExample(db, 'task.created', await insertStudent(db)); // another student: no grant
    const worker = work();
    const [first] = await hook.waitFor(1);
    assert.equal(first!.webhookId, taskEvent);
    assert.equal(first!.verifiedWith, 0);
    assertEventConforms(first!.event);
    // The worker's first pass fanned out all three events before this attempt began: one delivery, no other to come.
    assert.equal((await deliveriesOf(endpoint.id)).length, 1);
    await until(
      'the delivery to succeed',
      () => deliveriesOf(endpoint.id),
      (rows) => rows[0]?.status === 'succeeded',
    );
    assert.equal(hook.received.length, 1);

    // Revoked between fan-out and attempt: the attempt is skipped. Revoked before: no delivery at all.
    await worker.stop();
    const updated = await emitExample(db, 'task.updated', studentId);
    await fanOutBatch(db);
    assert.equal((await deliveriesOf(endpoint.id)).length, 2);
    await revokeGrant(db, grantId, 'test', new Date());
    await emitExample(db, 'task.created', studentId);
    work();
    const deliveries = await until(
      'the revoked delivery to fail',
      () => deliveriesOf(endpoint.id),
      (rows) => rows.some((d) => d.event_id === updated && d.status === 'failed'),
    );
    assert.equal(deliveries.length, 2, 'no delivery is made for an event after the revocation');
    assert.equal(hook.received.length, 1, 'nothing is sent once the grant is revoked');
  });

  it('signs with both secrets while a rotated-out secret is live, and a re-send repeats the same webhook-id', async () => {
    const studentId = await insertStudent(db);
    const old = 'whsec_' + randomBytes(32).toString('base64');
    const hook = await receiver();
    const endpoint = await rig.endpoint({ user_id: studentId }, hook, ['user.warned'], {
      previousSecret: { secret: old, expires_at: new Date(Date.now() + 60_000) },
    });
    const eventId = await emitExample(db, 'user.warned', studentId);
    work();
    const [delivery] = await hook.waitFor(1);
    assert.equal(delivery!.headers['webhook-signature']!.toString().split(' ').length, 2);
    // The old secret alone verifies it too: a receiver not yet switched keeps accepting.
    const { Webhook } = await import('standardwebhooks');
    const headers = Object.fromEntries(Object.entries(delivery!.headers).map(([k, v]) => [k, String(v)]));
    assert.doesNotThrow(() => new Webhook(old).verify(delivery!.body, headers));
    assert.doesNotThrow(() => new Webhook(endpoint.secret).verify(delivery!.body, headers));

    const [row] = await until(
      'the delivery to succeed',
      () => deliveriesOf(endpoint.id),
      (rows) => rows[0]?.status === 'succeeded',
    );
    // scheduleDelivery of the same pair reuses the delivery; a re-send makes one more attempt of it.
    assert.equal(
      await db.transaction().execute((trx) => scheduleDelivery(trx, { eventId, endpointId: endpoint.id })),
      row!.id,
    );
    assert.equal(await db.transaction().execute((trx) => resendDelivery(trx, row!.id)), true);
    const received = await hook.waitFor(2);
    assert.equal(received[1]!.webhookId, eventId);
    const [again] = await until(
      'the re-send to succeed',
      () => deliveriesOf(endpoint.id),
      (rows) => rows[0]?.status === 'succeeded' && rows[0].attempts === 2,
    );
    assert.equal(again!.id, row!.id);
  });

  it('gives a job to every pending delivery left without one (parked, or its job given up) when a worker starts, and sends nothing settled again', async () => {
    const studentId = await insertStudent(db);
    const hook = await receiver();
    const endpoint = await rig.endpoint({ user_id: studentId }, hook, ['task.created']);
    const [jobless, givenUp, settled] = [
      await emitExample(db, 'task.created', studentId),
      await emitExample(db, 'task.created', studentId),
      await emitExample(db, 'task.created', studentId),
    ];
    const now = new Date();
    await db.updateTable('events').set({ fanned_out_at: now }).where('id', 'in', [jobless, givenUp, settled]).execute();
    // A delivery made before attempts were jobs: a pending row and no job.
    await upsertDelivery(db, { event_id: jobless, endpoint_id: endpoint.id, at: now });
    // A delivery whose job pg-boss gave up on (its retries ran out while the database was away).
    const givenUpId = await scheduleDelivery(db, { eventId: givenUp, endpointId: endpoint.id }, now);
    await sql`update pgboss.job set state = 'failed' where singleton_key = ${givenUpId}`.execute(db);
    // A delivery that succeeded: no job, and none is due.
    const { id: settledId } = await upsertDelivery(db, { event_id: settled, endpoint_id: endpoint.id, at: now });
    await db
      .updateTable('webhook_deliveries')
      .set({ status: 'succeeded', succeeded_at: now, next_attempt_at: null })
      .where('id', '=', settledId)
      .execute();

    const worker = work();
    const received = await hook.waitFor(2);
    assert.deepEqual(received.map((d) => d.webhookId).sort(), [jobless, givenUp].sort());
    await until(
      'both deliveries to succeed',
      () => deliveriesOf(endpoint.id),
      (rows) => rows.filter((d) => d.status === 'succeeded').length === 3,
    );
    // A sweep after that found nothing to send: the settled delivery never got a job, and the stop ends any attempt.
    await aPassFromNow(worker);
    await worker.stop();
    const { rows } = await sql<{ jobs: string | number }>`
      select count(*) as jobs from pgboss.job where singleton_key = ${settledId}`.execute(db);
    assert.equal(Number(rows[0]!.jobs), 0, 'the settled delivery was given no job');
    assert.equal(hook.received.length, 2, 'the settled delivery is not sent again');
  });

  it('two workers on one queue never make the same attempt twice', async () => {
    // Three endpoints of one student (the account's three attempts at once): the queue holds three jobs at a time
    // for the two workers to fetch side by side, thirty deliveries in all.
    const studentId = await insertStudent(db);
    const hooks = await Promise.all([receiver(), receiver(), receiver()]);
    const endpoints = await Promise.all(
      hooks.map((hook) => rig.endpoint({ user_id: studentId }, hook, ['task.created'])),
    );
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push(await emitExample(db, 'task.created', studentId));
    const workers = [work(), work()];
    const received = await Promise.all(hooks.map((hook) => hook.waitFor(10)));
    for (const endpoint of endpoints)
      await until(
        'every delivery to succeed',
        () => deliveriesOf(endpoint.id),
        (rows) => rows.length === 10 && rows.every((d) => d.status === 'succeeded'),
      );
    // Stopped: an attempt either worker had under way has ended, and no other starts.
    await Promise.all(workers.map((worker) => worker.stop()));
    for (const [i, hook] of hooks.entries()) {
      assert.equal(hook.received.length, 10, 'one request per event and endpoint');
      assert.deepEqual(received[i]!.map((d) => d.webhookId).sort(), [...ids].sort());
    }
    const attempts = await db
      .selectFrom('webhook_attempts')
      .innerJoin('webhook_deliveries', 'webhook_deliveries.id', 'webhook_attempts.delivery_id')
      .select('webhook_attempts.id')
      .where(
        'endpoint_id',
        'in',
        endpoints.map((endpoint) => endpoint.id),
      )
      .execute();
    assert.equal(attempts.length, 30);
  });
});
