// Slow webhook receivers (issue item 5): a free account points its 10 endpoints at a receiver that never answers and
// creates tasks as fast as its minute allows. One slow or dead endpoint must not delay another's deliveries
// (per-endpoint concurrency, no batch waiting on its slowest member, a breaker per endpoint): the victim's own
// endpoint gets its task.created within 2 s of the victim's create. Counted as well as timed: the queue is given a
// job only for an attempt that can run now (the attacker's other deliveries wait parked in their table), so the
// jobs it got for the attacker are the attempts made plus the few waiting to start, never one per delivery.
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { WEBHOOK_DELIVERY_QUEUE } from '../../db/job-queue.ts';
import { DELIVERY_LIMITS } from '../../services/webhooks/gate.ts';
import { attempt, call, sleep } from '../faults/support/fixture.ts';
import { startReceiver, type Receiver } from '../services/webhooks/receiver.ts';
import { Attacker } from './support/attacker.ts';
import { ms } from './support/latency.ts';
import { FREE_PER_MINUTE, neighbourhood, type Neighbourhood } from './support/neighbourhood.ts';
import { assertUnharmed, unless, victimUnderAttack } from './support/victim.ts';

const ENDPOINTS = 10;
/** What the minute leaves after the endpoints. */
const CREATES = FREE_PER_MINUTE - ENDPOINTS - 5;
const CREATE_EVERY_MS = 200;
/** The victim creates a task after these many of the attacker's creations. */
const VICTIM_CREATES_AFTER = [15, 30, CREATES];
const DELIVERED_WITHIN_MS = 2_000;
/** How long the test waits for a delivery before it calls it missing (beyond the bound, so a late one still shows). */
const WAIT_FOR_DELIVERY_MS = 5_000;

/** Jobs the delivery queue was ever given for the account's deliveries, and how many of those are still pending. */
async function queueShareOf(n: Neighbourhood, userId: string): Promise<{ jobs: number; pending: number }> {
  const { rows } = await sql<{ jobs: string | number; pending: string | number }>`
    with mine as (select d.id, d.status from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id where e.user_id = ${userId})
    select (select count(*) from pgboss.job j where j.name = ${WEBHOOK_DELIVERY_QUEUE} and (j.data->>'delivery_id')::uuid in (select id from mine)) as jobs,
           (select count(*) from mine where status = 'pending') as pending`.execute(n.database.db);
  return { jobs: Number(rows[0]!.jobs), pending: Number(rows[0]!.pending) };
}

describe('noisy neighbour: webhook receivers that never answer', function () {
  this.timeout(90_000);
  let n: Neighbourhood;
  let dead: Receiver;
  let victims: Receiver;

  before(async () => {
    [dead, victims] = await Promise.all([startReceiver(), startReceiver()]);
    dead.script([], 'hang');
    // Attempts keep their default timeout (10 s), as a deployment's would.
    n = await neighbourhood('webhooks', { env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: '1' } });
    const endpoint = await call(`${n.base}/api/webhooks/endpoints`, {
      method: 'POST',
      headers: { 'X-Service-API-Key': n.victim.key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: victims.url, event_types: ['task.created'], description: 'the victim' }),
    });
    assert.equal(endpoint.status, 201, JSON.stringify(endpoint.body));
    victims.secrets.push(endpoint.body.secret);
  });
  after(async () => {
    await n?.close();
    await Promise.all([dead?.close(), victims?.close()]);
  });

  /** Milliseconds from `sentAt` to the victim receiver's task.created for `taskId`, or undefined when none came in time. */
  async function deliveredAfter(taskId: string, sentAt: number): Promise<number | undefined> {
    while (performance.now() - sentAt < WAIT_FOR_DELIVERY_MS) {
      if (victims.received.some((r) => r.event.type === 'task.created' && (r.event as any).data.object.id === taskId))
        return performance.now() - sentAt;
      await sleep(20);
    }
    return undefined;
  }

  it(`${ENDPOINTS} endpoints that never answer and ${CREATES} task creations do not delay the victim's deliveries`, async () => {
    const attacker = new Attacker(n.base, n.attacker.key);
    const deliveries: Array<Promise<number | undefined>> = [];
    const victimCreates: number[] = [];
    const victimCreate = async () => {
      const sentAt = performance.now();
      const created = await attempt(`${n.base}/api/tasks`, {
        method: 'POST',
        headers: { 'X-Service-API-Key': n.victim.key, 'Content-Type': 'application/json' },
        body: JSON.stringify({ title: 'The victim’s own task', due_at: '2030-06-01T09:00:00Z', course: 'Victim' }),
      });
      victimCreates.push(created.status);
      if (created.status === 201) deliveries.push(deliveredAfter(created.body.id, sentAt));
    };

    // A positive control: before the attack, once a first delivery has warmed the path (the relay, the queue's
    // workers), the victim's endpoint gets its task.created in time.
    await victimCreate();
    const [firstMs] = await Promise.all(deliveries.splice(0));
    await victimCreate();
    const [unattendedMs] = await Promise.all(deliveries.splice(0));
    let deliveredMs: Array<number | undefined> = [];
    let share = { jobs: 0, pending: 0 };
    const verdict = await victimUnderAttack(n, 'slow webhook receivers', async (pressure) => {
      for (let i = 0; i < ENDPOINTS; i++) {
        await attacker.call('POST /api/webhooks/endpoints (never answers)', 'POST', '/api/webhooks/endpoints', {
          url: `${dead.url}/${i}`,
          event_types: ['task.created'],
        });
      }
      for (let i = 1; i <= CREATES; i++) {
        const sentAt = performance.now();
        await attacker.call('POST /api/tasks', 'POST', '/api/tasks', {
          title: `Noise ${i}`,
          due_at: '2030-06-01T09:00:00Z',
          course: 'Noise',
        });
        if (VICTIM_CREATES_AFTER.includes(i)) await victimCreate();
        await sleep(Math.max(0, sentAt + CREATE_EVERY_MS - performance.now()));
      }
      deliveredMs = await Promise.all(deliveries);
      share = await queueShareOf(n, n.attacker.id);
      pressure.note(
        `${ENDPOINTS} endpoints at a receiver that never answers (attempts time out after 10 s), ${CREATES} task creations: up to ${ENDPOINTS * CREATES} deliveries that hang`,
      );
      pressure.note(
        `the dead receiver got ${dead.received.length} requests; the victim's endpoint got its task.created after ${[firstMs, unattendedMs].map((d) => (d === undefined ? 'nothing' : ms(d))).join(' then ')} before the attack (a first delivery, then the control), and during it after ${deliveredMs.map((d) => (d === undefined ? `none within ${ms(WAIT_FOR_DELIVERY_MS)}` : ms(d))).join(', ')} (bound ${ms(DELIVERED_WITHIN_MS)})`,
      );
      pressure.note(
        `the queue was given ${share.jobs} jobs for the attacker's deliveries while ${share.pending} of them were pending`,
      );
      pressure.note(attacker.describe());
    });
    // Each job the attacker got is an attempt the dead receiver saw, or one of its few places not yet started.
    const jobBound = dead.received.length + DELIVERY_LIMITS.attemptsPerAccount;

    const late = deliveredMs.filter((d) => d === undefined || d > DELIVERED_WITHIN_MS).length;
    assertUnharmed(verdict, [
      ...unless(
        unattendedMs !== undefined && unattendedMs <= DELIVERED_WITHIN_MS,
        `even before the attack the victim's task.created came after ${unattendedMs === undefined ? `more than ${ms(WAIT_FOR_DELIVERY_MS)}` : ms(unattendedMs)}`,
      ),
      ...unless(
        victimCreates.length === VICTIM_CREATES_AFTER.length + 2 && victimCreates.every((status) => status === 201),
        `the victim's creates answered ${victimCreates.join(', ')}`,
      ),
      ...unless(
        share.jobs <= jobBound,
        `the queue was given ${share.jobs} jobs for the attacker's deliveries, more than the ${dead.received.length} attempts made and ${DELIVERY_LIMITS.attemptsPerAccount} places waiting to start`,
      ),
      ...unless(
        late === 0,
        `${late} of the victim's ${deliveredMs.length} task.created deliveries came later than ${ms(DELIVERED_WITHIN_MS)} (or not within ${ms(WAIT_FOR_DELIVERY_MS)})`,
      ),
      // The attack was made: the endpoints exist, the tasks were created, and the dead receiver was called.
      ...unless(
        attacker.answered('POST /api/webhooks/endpoints (never answers)', 201) === ENDPOINTS,
        `the attacker's endpoints were not all created: ${attacker.describe()}`,
      ),
      ...unless(
        attacker.answered('POST /api/tasks', 201) >= CREATES / 2,
        `the attacker's tasks were refused: ${attacker.describe()}`,
      ),
      ...unless(dead.received.length >= 1, 'the dead receiver was never called'),
    ]);
  });
});
