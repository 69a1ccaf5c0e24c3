// Fair webhook delivery, in process, on a database of its own: one student's dead and trickling receivers (on
// loopback) cannot delay another student's deliveries or test events, one account holds at most its share of the
// attempts in flight, one endpoint gets one attempt at a time, and an endpoint's circuit breaker opens after a run
// of failures, holds its deliveries back without losing them or spending their retries, and closes on a success.
// Assertions are on order and counts (what had happened when something else arrived), not on durations.
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { Db } from '../../../db/connect.ts';
import { WEBHOOK_DELIVERY_QUEUE } from '../../../db/job-queue.ts';
import type { WebhookConfig } from '../../../services/webhooks/delivery-config.ts';
import { emitEvent } from '../../../services/events/emit.ts';
import { DELIVERY_LIMITS, type DeliveryLimits } from '../../../services/webhooks/gate.ts';
import { relayPass } from '../../../services/webhooks/fan-out.ts';
import { scheduleDelivery } from '../../../services/webhooks/queue.ts';
import { emitExample, exampleEvents, insertStudent } from './fixtures.ts';
import type { Receiver, Reply } from './receiver.ts';
import { deliveryRig } from './rig.ts';

/**
 * Six times the production value (10 s): a victim's delivery must come before any of the slow attempts under way
 * ended, a window that stays wide on a loaded machine, and a third of which bounds the victim's wait.
 */
const ATTEMPT_TIMEOUT_MS = 60_000;
/**
 * The trickling attempt's own timeout, which its test waits out: a trickle answers a byte every 100 ms, so its
 * attempt would never end without a bound on the whole exchange.
 */
const TRICKLE_TIMEOUT_MS = 1_500;
const config: WebhookConfig = {
  allowPrivateTargets: true,
  attemptTimeoutMs: ATTEMPT_TIMEOUT_MS,
  retryScale: 0.001,
  // A fifth of the product's least WEBHOOK_POLL_MS: the breaker's deliveries, parked until it closes, wait for a poll.
  pollMs: 100,
  attemptsPerProcess: 200,
};

describe('fair webhook delivery', function () {
  this.timeout(2 * ATTEMPT_TIMEOUT_MS);
  const rig = deliveryRig(config, async (db) => {
    // What a test left queued (the attacker's backlog) is not the next test's load.
    await sql`delete from pgboss.job where name = ${WEBHOOK_DELIVERY_QUEUE} and state in ('created', 'retry')`.execute(
      db,
    );
    await db
      .updateTable('webhook_deliveries')
      .set({ status: 'failed', next_attempt_at: null })
      .where('status', '=', 'pending')
      .execute();
  });
  let db: Db;
  before(() => {
    db = rig.db;
  });

  /** A worker as a process runs one: woken by the commits' notifications, as well as by its poll. */
  const work = (limits: Partial<DeliveryLimits> = {}, overrides: Partial<WebhookConfig> = {}) =>
    rig.work({ limits, config: overrides, woken: true });
  const receiver = (otherwise: Reply = 204) => rig.receiver(otherwise);
  const endpointOf = (studentId: string, r: Receiver, types = ['task.created']) =>
    rig.endpoint({ user_id: studentId }, r, types);
  /** Attempts recorded (finished) for the student's endpoints. */
  const attemptsRecordedFor = async (studentId: string) => {
    const row = await db
      .selectFrom('webhook_attempts as a')
      .innerJoin('webhook_deliveries as d', 'd.id', 'a.delivery_id')
      .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
      .select((eb) => eb.fn.countAll<string | number>().as('count'))
      .where('e.user_id', '=', studentId)
      .executeTakeFirstOrThrow();
    return Number(row.count);
  };
  /** Jobs the queue was ever given for the student's deliveries (waiting, running, done or re-queued). */
  const jobsFor = async (studentId: string) => {
    const { rows } = await sql<{ jobs: string | number }>`
      select count(*) as jobs from pgboss.job j
      where j.name = ${WEBHOOK_DELIVERY_QUEUE} and (j.data->>'delivery_id')::uuid in (
        select d.id from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id where e.user_id = ${studentId})`.execute(
      db,
    );
    return Number(rows[0]!.jobs);
  };
  async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  it("delivers another student's event at once while one student's ten endpoints never answer or trickle", async () => {
    const attacker = await insertStudent(db);
    const dead = await receiver('hang');
    const trickling = await receiver('trickle');
    for (let i = 0; i < 10; i++) await endpointOf(attacker, i % 2 === 0 ? dead : trickling);
    for (let i = 0; i < 6; i++) await emitExample(db, 'task.created', attacker);
    work();
    // The attacker's attempts are under way (60 deliveries queued before the victim's event).
    await until('the attacker to hold attempts open', () => dead.inFlight + trickling.inFlight > 0);

    const victim = await insertStudent(db);
    const healthy = await receiver();
    await endpointOf(victim, healthy);
    const endedBefore = await attemptsRecordedFor(attacker);
    const sent = performance.now();
    const eventId = await emitExample(db, 'task.created', victim);
    const [delivery] = await healthy.waitFor(1, ATTEMPT_TIMEOUT_MS);
    const tookMs = Math.round(performance.now() - sent);
    const endedMeanwhile = (await attemptsRecordedFor(attacker)) - endedBefore;
    console.log(
      `      victim's task.created after ${tookMs} ms; the attacker's attempts then: ${dead.inFlight + trickling.inFlight} in flight, ${endedMeanwhile} ended meanwhile`,
    );

    assert.equal(delivery!.webhookId, eventId);
    assert.equal(delivery!.verifiedWith, 0);
    assert.equal(endedMeanwhile, 0, "the victim's delivery did not wait for any of the attacker's attempts to end");
    assert.ok(tookMs < ATTEMPT_TIMEOUT_MS / 3, `delivered in ${tookMs} ms, long before any slow attempt timed out`);
    assert.ok(
      dead.mostAtOnce + trickling.mostAtOnce <= DELIVERY_LIMITS.attemptsPerAccount,
      `the attacker held at most ${DELIVERY_LIMITS.attemptsPerAccount} attempts at once (${dead.mostAtOnce} + ${trickling.mostAtOnce})`,
    );
  });

  it("delivers another student's event promptly behind hundreds of one student's deliveries to dead endpoints, and queues only what can run", async () => {
    const attacker = await insertStudent(db);
    const dead = await receiver('hang');
    const endpoints = 10;
    const events = 30;
    for (let i = 0; i < endpoints; i++) await endpointOf(attacker, dead);
    for (let i = 0; i < events; i++) await emitExample(db, 'task.created', attacker);
    work();
    await until('the attacker to hold its attempts open', () => dead.inFlight === DELIVERY_LIMITS.attemptsPerAccount);

    const victim = await insertStudent(db);
    const healthy = await receiver();
    await endpointOf(victim, healthy);
    const endedBefore = await attemptsRecordedFor(attacker);
    const sent = performance.now();
    const eventId = await emitExample(db, 'task.created', victim);
    const [delivery] = await healthy.waitFor(1, ATTEMPT_TIMEOUT_MS);
    const tookMs = Math.round(performance.now() - sent);
    const endedMeanwhile = (await attemptsRecordedFor(attacker)) - endedBefore;
    const jobs = await jobsFor(attacker);
    const { rows } = await sql<{ parked: string | number }>`
      select count(*) as parked from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id
      where e.user_id = ${attacker} and d.status = 'pending'`.execute(db);
    const parked = Number(rows[0]!.parked);
    console.log(
      `      victim's task.created after ${tookMs} ms behind ${parked} of the attacker's pending deliveries; the queue was given ${jobs} jobs for them`,
    );

    assert.equal(delivery!.webhookId, eventId);
    assert.equal(parked, endpoints * events, 'every delivery of the attacker is kept (pending) while it waits');
    assert.equal(endedMeanwhile, 0, "the victim's delivery did not wait for any of the attacker's attempts to end");
    assert.ok(
      jobs <= DELIVERY_LIMITS.attemptsPerAccount,
      `the queue holds only the attacker's attempts that can run (${jobs} jobs for ${parked} deliveries)`,
    );
  });

  it("gives the attempt slots to the accounts in turn: another student's first attempt before any account's second", async () => {
    // More runnable attempts than slots: three accounts, three endpoints each at a receiver that holds every request,
    // two slots. Once the victim's delivery is queued, the receivers answer the two held attempts, and the slots are
    // free again. Taken in arrival order, the first account's three attempts would go before the others' first; taken
    // in turn, each account's first goes before any second, the victim's included.
    const crowd = await Promise.all(
      Array.from({ length: 3 }, async () => {
        const student = await insertStudent(db);
        const dead = await receiver('hang');
        for (let i = 0; i < 3; i++) await endpointOf(student, dead);
        await emitExample(db, 'task.created', student);
        return dead;
      }),
    );
    // Their deliveries get their jobs before the worker starts, so that its first fetch finds them all queued.
    await relayPass(db, { limits: DELIVERY_LIMITS, leaseMs: 2 * ATTEMPT_TIMEOUT_MS });
    work({}, { attemptsPerProcess: 2 });
    await until('both slots to hold an attempt', () => crowd.reduce((sum, dead) => sum + dead.inFlight, 0) === 2);

    const victim = await insertStudent(db);
    const healthy = await receiver();
    await endpointOf(victim, healthy);
    await emitExample(db, 'task.created', victim);
    await until("the victim's delivery to be queued", async () => (await jobsFor(victim)) === 1);
    for (const dead of crowd) dead.release(503);
    await healthy.waitFor(1, ATTEMPT_TIMEOUT_MS);
    const before = crowd.map((dead) => dead.received.length);
    console.log(`      the crowd's accounts had each had ${before.join(', ')} attempts when the victim's started`);
    assert.ok(
      before.every((attempts) => attempts <= 1),
      "every account's first attempt, the victim's included, went before any account's second",
    );
  });

  it("sends another student's test event while a trickling receiver holds an attempt", async () => {
    const attacker = await insertStudent(db);
    const trickling = await receiver('trickle');
    await endpointOf(attacker, trickling);
    await emitExample(db, 'task.created', attacker);
    work();
    await until('the trickling attempt to be under way', () => trickling.inFlight === 1);

    const victim = await insertStudent(db);
    const healthy = await receiver();
    const endpoint = await endpointOf(victim, healthy, ['task.created']);
    const example = exampleEvents().get('webhook.test')!;
    const endedBefore = await attemptsRecordedFor(attacker);
    const sent = performance.now();
    // As sendWebhookTestEvent does: a webhook.test event and its delivery to this endpoint only.
    const eventId = await db.transaction().execute(async (trx) => {
      const id = await emitEvent(trx, {
        type: 'webhook.test',
        studentId: victim,
        data: example.data as never,
        at: new Date(),
        direct: true,
      });
      await scheduleDelivery(trx, { eventId: id, endpointId: endpoint.id });
      return id;
    });
    const [delivery] = await healthy.waitFor(1, ATTEMPT_TIMEOUT_MS);
    const tookMs = Math.round(performance.now() - sent);
    const trickleEnded = (await attemptsRecordedFor(attacker)) - endedBefore;
    console.log(
      `      victim's webhook.test after ${tookMs} ms, the trickling attempt still open: ${trickleEnded === 0}`,
    );
    assert.equal(endedBefore, 0);
    assert.equal(delivery!.webhookId, eventId);
    assert.equal(delivery!.event.type, 'webhook.test');
    assert.equal(trickleEnded, 0, 'the test event did not wait for the trickling attempt');
  });

  it('ends a trickling attempt at its timeout although bytes keep coming: a failed attempt, retried later', async () => {
    const attacker = await insertStudent(db);
    const trickling = await receiver('trickle');
    await endpointOf(attacker, trickling);
    await emitExample(db, 'task.created', attacker);
    work({}, { attemptTimeoutMs: TRICKLE_TIMEOUT_MS });
    await until('the trickling attempt to be recorded', async () => (await attemptsRecordedFor(attacker)) === 1);
    const [attempt] = await db
      .selectFrom('webhook_attempts as a')
      .innerJoin('webhook_deliveries as d', 'd.id', 'a.delivery_id')
      .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
      .select(['a.response_status', 'a.error', 'a.duration_ms'])
      .where('e.user_id', '=', attacker)
      .execute();
    assert.ok(trickling.received.length >= 1, 'the receiver was trickling its answer');
    assert.equal(attempt!.response_status, null);
    assert.match(attempt!.error!, new RegExp(`timed out after ${TRICKLE_TIMEOUT_MS} ms`));
    assert.ok(attempt!.duration_ms < 2 * TRICKLE_TIMEOUT_MS, `the attempt took ${attempt!.duration_ms} ms`);
  });

  it("opens an endpoint's breaker after a run of failures, sends it nothing while open, loses nothing, and closes on a success", async () => {
    const student = await insertStudent(db);
    const flaky = await receiver();
    flaky.script([500, 500, 500], 204);
    const endpoint = await endpointOf(student, flaky);
    const events: string[] = [];
    for (let i = 0; i < 6; i++) events.push(await emitExample(db, 'task.created', student));
    // Three failures open it; it stays open 1.5 s (breakerBaseMs × WEBHOOK_RETRY_SCALE).
    work({ breakerThreshold: 3, breakerBaseMs: 1_500_000 });

    const gate = () =>
      db
        .selectFrom('webhook_endpoint_gates')
        .select(['failures', 'open_until', 'lease_until'])
        .where('endpoint_id', '=', endpoint.id)
        .executeTakeFirst();
    let opened: Date | null = null;
    await until('the breaker to open', async () => {
      opened = (await gate())?.open_until ?? null;
      return opened !== null;
    });
    assert.equal((await gate())!.failures, 3);
    assert.equal(flaky.received.length, 3, 'nothing more was sent once it opened');

    await until('every delivery to succeed', async () => {
      const rows = await db
        .selectFrom('webhook_deliveries')
        .select('status')
        .where('endpoint_id', '=', endpoint.id)
        .execute();
      return rows.length === 6 && rows.every((d) => d.status === 'succeeded');
    });
    const afterOpen = flaky.received.slice(3);
    assert.ok(
      afterOpen.every((r) => r.receivedAt >= opened!),
      'no request reached the endpoint while its breaker was open',
    );
    assert.deepEqual(
      [...new Set(flaky.received.filter((r) => r.status === 204).map((r) => r.webhookId))].sort(),
      [...events].sort(),
      'every event was delivered',
    );
    assert.equal(flaky.received.length, 9, 'three failures, then one success per event');
    const attempts = await db
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.fn.sum<string | number>('attempts').as('sum'))
      .where('endpoint_id', '=', endpoint.id)
      .executeTakeFirstOrThrow();
    assert.equal(Number(attempts.sum), 9, 'parked deliveries spent no attempt');
    // Every job the queue was given for the endpoint made its attempt: none was fetched only to be held back.
    const { rows } = await sql<{ jobs: string | number }>`
      select count(*) as jobs from pgboss.job j
      where j.name = ${WEBHOOK_DELIVERY_QUEUE} and (j.data->>'delivery_id')::uuid in (select id from webhook_deliveries where endpoint_id = ${endpoint.id})`.execute(
      db,
    );
    assert.equal(Number(rows[0]!.jobs), 9, 'one job per attempt, none re-queued while the breaker was open');
    assert.equal(flaky.mostAtOnce, 1, 'one attempt at a time to the endpoint');
    const closed = await gate();
    assert.equal(closed!.failures, 0);
    assert.equal(closed!.open_until, null);
  });
});
