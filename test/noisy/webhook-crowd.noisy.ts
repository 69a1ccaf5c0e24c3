// A crowd of accounts with slow webhook receivers (issue 34, item 2): one person signs up 16 free accounts through the
// open sign-up (from as many client addresses as its quota per address needs), each points 10 endpoints at a receiver
// that answers after 9 s and creates a few tasks: hundreds of deliveries, each holding an attempt for 9 s, at most
// 3 at a time per account. Meanwhile the victim creates tasks and its own endpoint must get each task.created's first
// attempt within 1 s (p99): the per-account bound holds each account to its share, and the shared capacity (attempts
// in flight per process) must be sized for network waits and given to the accounts in turn, not in arrival order.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { WEBHOOK_DELIVERY_QUEUE } from '../../db/job-queue.ts';
import { attempt, call, sleep } from '../faults/support/fixture.ts';
import { startReceiver, type Receiver } from '../services/webhooks/receiver.ts';
import { Attacker } from './support/attacker.ts';
import { describeSpread, ms, spread } from './support/latency.ts';
import { neighbourhood, type Neighbourhood } from './support/neighbourhood.ts';
import { signUpCrowd, type Crowd } from './support/sign-up.ts';
import { assertUnharmed, unless, victimUnderAttack } from './support/victim.ts';

const ACCOUNTS = 16;
const ENDPOINTS = 10;
const TASKS = 4;
/** The crowd's receiver answers 200 after this long: within the attempt's timeout (10 s), so each attempt waits. */
const ANSWER_AFTER_MS = 9_000;
const VICTIM_CREATES = 12;
const VICTIM_EVERY_MS = 750;
const FIRST_ATTEMPT_P99_MS = 1_000;
const REGISTER = 'POST /api/webhooks/endpoints (answers after 9 s)';
/** How long the test waits for a delivery before it calls it missing (beyond the bound, so a late one still shows). */
const WAIT_FOR_DELIVERY_MS = 15_000;

/** A receiver that answers every request with a 200 after ANSWER_AFTER_MS, counting those it holds. */
interface SlowReceiver {
  url: string;
  received: number;
  inFlight: number;
  mostAtOnce: number;
  close(): void;
}

async function slowReceiver(): Promise<SlowReceiver> {
  const state = { received: 0, inFlight: 0, mostAtOnce: 0 };
  const timers = new Set<NodeJS.Timeout>();
  const server: Server = createServer((req, res) => {
    state.received++;
    state.inFlight++;
    state.mostAtOnce = Math.max(state.mostAtOnce, state.inFlight);
    res.on('close', () => state.inFlight--);
    req.resume();
    const timer = setTimeout(() => (timers.delete(timer), res.writeHead(200).end()), ANSWER_AFTER_MS);
    timers.add(timer);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(state, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    close: () => {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      server.close();
    },
  });
}

/**
 * Where the victim's first attempts spent their time, stage by stage (the database's clock): from the event's
 * transaction to its fan-out, to its job (dispatch), to the job's fetch, and from the fetch to the receiver.
 */
async function stagesOf(n: Neighbourhood, received: Receiver['received']): Promise<string> {
  const { rows } = await sql<{ id: string; created_at: Date; fanned_out_at: Date; queued: Date; fetched: Date }>`
    select e.id, e.created_at, e.fanned_out_at, min(j.created_on) as queued, min(j.started_on) as fetched
    from events e join webhook_deliveries d on d.event_id = e.id join webhook_endpoints w on w.id = d.endpoint_id
    join pgboss.job j on j.name = ${WEBHOOK_DELIVERY_QUEUE} and (j.data->>'delivery_id')::uuid = d.id
    where w.user_id = ${n.victim.id} and e.type = 'task.created' group by e.id`.execute(n.database.db);
  const arrived = new Map(received.map((r) => [r.webhookId, r.receivedAt.getTime()]));
  type Row = (typeof rows)[number];
  const stage = (name: string, of: (r: Row) => number) => `${name} ${describeSpread(spread(rows.map(of)))}`;
  const t = (d: Date) => new Date(d).getTime();
  return [
    stage('to the fan-out', (r) => t(r.fanned_out_at) - t(r.created_at)),
    stage('to the job', (r) => t(r.queued) - t(r.fanned_out_at)),
    stage('to its fetch', (r) => t(r.fetched) - t(r.queued)),
    stage('to the receiver', (r) => (arrived.get(r.id) ?? NaN) - t(r.fetched)),
  ].join('; ');
}

describe('noisy neighbour: a crowd of accounts with slow webhook receivers', function () {
  this.timeout(120_000);
  let n: Neighbourhood;
  let slow: SlowReceiver;
  let victims: Receiver;
  let crowd: Crowd;
  let attackers: Attacker[];

  before(async () => {
    [slow, victims] = await Promise.all([slowReceiver(), startReceiver()]);
    n = await neighbourhood('webhook_crowd', { env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: '1' } });
    const endpoint = await call(`${n.base}/api/webhooks/endpoints`, {
      method: 'POST',
      headers: { 'X-Service-API-Key': n.victim.key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: victims.url, event_types: ['task.created'], description: 'the victim' }),
    });
    assert.equal(endpoint.status, 201, JSON.stringify(endpoint.body));
    victims.secrets.push(endpoint.body.secret);
    crowd = await signUpCrowd(n.base, n.database, ACCOUNTS);
    attackers = crowd.accounts.map((account) => new Attacker(n.base, account.key));
    // The endpoints are the crowd's set-up, made before the victim's baseline: the pressure is the deliveries.
    for (const [a, attacker] of attackers.entries()) {
      for (let i = 0; i < ENDPOINTS; i++) {
        const endpoint = { url: `${slow.url}/${a}/${i}`, event_types: ['task.created'] };
        await attacker.call(REGISTER, 'POST', '/api/webhooks/endpoints', endpoint);
      }
    }
  });
  after(async () => {
    await n?.close();
    slow?.close();
    await victims?.close();
  });

  const title = `${ACCOUNTS} accounts × ${ENDPOINTS} endpoints answering after ${ANSWER_AFTER_MS / 1000} s`;
  it(`${title} leave the victim's first attempts within ${ms(FIRST_ATTEMPT_P99_MS)}`, async () => {
    const latencies: Array<number | undefined> = [];
    const victimCreates: number[] = [];
    const firstAttemptAfter = async (taskId: string, sentAt: number): Promise<number | undefined> => {
      while (Date.now() - sentAt < WAIT_FOR_DELIVERY_MS) {
        const got = victims.received.find((r) => (r.event as any).data.object.id === taskId);
        if (got) return got.receivedAt.getTime() - sentAt;
        await sleep(20);
      }
      return undefined;
    };
    let heldAtOnce = 0;

    const verdict = await victimUnderAttack(n, 'a crowd of slow webhook receivers', async (pressure) => {
      // The server's own CPU, from here.
      const cpuBefore = (await n.metric('process_cpu_seconds_total')) ?? 0;
      pressure.step('creates tasks');
      for (let i = 1; i <= TASKS; i++) {
        const task = { title: `Noise ${i}`, due_at: '2030-06-01T09:00:00Z', course: 'Noise' };
        for (const attacker of attackers) await attacker.call('POST /api/tasks', 'POST', '/api/tasks', task);
      }
      // The crowd's attempts are under way before the victim's first event.
      const holding = performance.now();
      while (slow.inFlight < ACCOUNTS && performance.now() - holding < WAIT_FOR_DELIVERY_MS) await sleep(50);
      pressure.step('holds attempts open');
      const waits: Array<Promise<number | undefined>> = [];
      for (let i = 1; i <= VICTIM_CREATES; i++) {
        const sentAt = Date.now();
        heldAtOnce = Math.max(heldAtOnce, slow.inFlight);
        const created = await attempt(`${n.base}/api/tasks`, {
          method: 'POST',
          headers: { 'X-Service-API-Key': n.victim.key, 'Content-Type': 'application/json' },
          body: JSON.stringify({ title: `The victim’s task ${i}`, due_at: '2030-06-01T09:00:00Z', course: 'Victim' }),
        });
        victimCreates.push(created.status);
        if (created.status === 201) waits.push(firstAttemptAfter(created.body.id, sentAt));
        await sleep(Math.max(0, sentAt + VICTIM_EVERY_MS - Date.now()));
      }
      latencies.push(...(await Promise.all(waits)));
      const deliveries = ACCOUNTS * ENDPOINTS * TASKS;
      pressure.note(
        `${ACCOUNTS} accounts signed up from ${crowd.addresses.length} client addresses ` +
          `(${crowd.refused} sign-ups refused by the quota per address), ${ENDPOINTS} endpoints each at a receiver ` +
          `answering after ${ANSWER_AFTER_MS / 1000} s, ${TASKS} tasks each: ${deliveries} deliveries that wait`,
      );
      pressure.note(
        `the slow receiver got ${slow.received} requests, at most ${slow.mostAtOnce} at once ` +
          `(${heldAtOnce} held while the victim created its tasks)`,
      );
      const got = latencies.filter((l): l is number => l !== undefined);
      pressure.note(
        `the victim's first attempts, from its create: ${describeSpread(spread(got))}; ` +
          `${latencies.length - got.length} of ${latencies.length} not within ${ms(WAIT_FOR_DELIVERY_MS)} ` +
          `(bound: p99 ${ms(FIRST_ATTEMPT_P99_MS)})`,
      );
      const cpu = ((await n.metric('process_cpu_seconds_total')) ?? 0) - cpuBefore;
      pressure.note(`the server process spent ${cpu.toFixed(1)} s of CPU meanwhile`);
      pressure.note(`where the victim's first attempts spent their time: ${await stagesOf(n, victims.received)}`);
      for (const [i, attacker] of attackers.entries()) {
        if (i === 0 || attacker.unansweredOr5xx().length > 0) pressure.note(`account ${i + 1}: ${attacker.describe()}`);
      }
    });

    const firstAttempts = spread(latencies.map((l) => l ?? Infinity));
    const answered = (what: string) => attackers.reduce((sum, attacker) => sum + attacker.answered(what, 201), 0);
    assertUnharmed(verdict, [
      ...unless(
        victimCreates.length === VICTIM_CREATES && victimCreates.every((status) => status === 201),
        `the victim's creates answered ${victimCreates.join(', ')}`,
      ),
      ...unless(
        firstAttempts.p99 < FIRST_ATTEMPT_P99_MS,
        `the victim's first attempts took ${describeSpread(firstAttempts)} (bound: p99 < ${ms(FIRST_ATTEMPT_P99_MS)})`,
      ),
      // The attack was made: the accounts, their endpoints and tasks exist, and the crowd held attempts open.
      ...unless(crowd.accounts.length === ACCOUNTS, `${crowd.accounts.length} accounts were signed up`),
      ...unless(answered(REGISTER) === ACCOUNTS * ENDPOINTS, 'the crowd’s endpoints were not all created'),
      ...unless(answered('POST /api/tasks') === ACCOUNTS * TASKS, 'the crowd’s tasks were not all created'),
      ...unless(heldAtOnce >= ACCOUNTS, `the crowd held ${heldAtOnce} attempts open while the victim created tasks`),
    ]);
  });
});
