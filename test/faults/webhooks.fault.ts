// Webhook delivery through real processes on PostgreSQL: the app killed (kill -9) while receivers hold requests
// open, then restarted — every event reaches the receiver, duplicates only as retries of an unacknowledged
// webhook-id; two worker processes on one queue never make one attempt twice; a receiver that fails several
// attempts gets the same event until it accepts; a worker process stops cleanly on SIGTERM; a worker process is woken
// by the commit of an event in a web process, not by its poll. Retries are compressed (WEBHOOK_RETRY_SCALE, test-only).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { secretBox } from '../../server/auth/secret-box.ts';
import { assertEventConforms } from '../support/event-contract.ts';
import { startServerProcess, TEST_SECRETS_KEY, type ServerProcess } from '../support/server-process.ts';
import { insertEndpoint } from '../services/webhooks/fixtures.ts';
import { startReceiver, type Receiver } from '../services/webhooks/receiver.ts';
import { faultDatabase, requiredEnv, until, type FaultDatabase } from './support/fixture.ts';

const box = secretBox(Buffer.from(TEST_SECRETS_KEY, 'base64'));
// An attempt to a receiver that answers at once must never time out, even on a machine doing twice its work: a
// timed-out attempt that the receiver answered is a second acknowledgement, which the kill test counts as a failure.
const ATTEMPT_TIMEOUT_MS = 5_000;
// A process that dies mid-delivery leaves jobs that come back once they expire (twice the attempt timeout and a
// margin, found by maintenance that runs as often): these waits allow twice that and more.
const AFTER_RESTART_MS = 120_000;
const NOTIFIED_WITHIN_MS = 20_000;

describe('webhook delivery across kills and processes', function () {
  this.timeout(240_000);
  const redisUrl = requiredEnv('REDIS_URL');
  let database: FaultDatabase;
  const servers: ServerProcess[] = [];
  const receivers: Receiver[] = [];

  before(async () => {
    database = await faultDatabase('sc_fault_webhooks');
  });
  afterEach(async () => {
    for (const server of servers.splice(0))
      if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
    await Promise.all(receivers.splice(0).map((r) => r.close()));
  });
  after(() => database?.drop());

  const start = (args: string[] = [], env: Record<string, string> = {}) => {
    const server = startServerProcess(
      {
        DATABASE_URL: database.url,
        REDIS_URL: redisUrl,
        WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
        WEBHOOK_ATTEMPT_TIMEOUT_MS: String(ATTEMPT_TIMEOUT_MS),
        WEBHOOK_RETRY_SCALE: '0.001',
        WEBHOOK_POLL_MS: '500',
        SHUTDOWN_DRAIN_SECONDS: '0',
        ...env,
      },
      args,
    );
    servers.push(server);
    return server;
  };
  /** A receiver and an endpoint of the student for `types`, on a fresh run id so tests do not see each other. */
  const endpointFor = async (types: string[]) => {
    const receiver = await startReceiver();
    receivers.push(receiver);
    const endpoint = await insertEndpoint(
      database.db,
      box,
      { user_id: database.studentId },
      { url: receiver.url, event_types: types },
    );
    receiver.secrets.push(endpoint.secret);
    return { receiver, endpoint };
  };
  const createTasks = async (baseUrl: string, count: number) => {
    const run = randomUUID().slice(0, 8);
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const response = await fetch(`${baseUrl}/api/tasks`, {
        method: 'POST',
        headers: { 'X-Service-API-Key': database.studentKey, 'content-type': 'application/json' },
        body: JSON.stringify({ title: `hook ${run} #${i}`, due_at: '2030-06-01T09:00:00Z', course: 'Fault suite' }),
      });
      assert.equal(response.status, 201);
      ids.push(((await response.json()) as { id: string }).id);
    }
    return ids;
  };
  const eventIdsOf = async (taskIds: string[]) => {
    const rows = await database.db
      .selectFrom('events')
      .select(['id', 'data'])
      .where('type', '=', 'task.created')
      .where('user_id', '=', database.studentId)
      .execute();
    return rows
      .filter((row) => taskIds.includes((row.data as { object: { id: string } }).object.id))
      .map((row) => row.id);
  };
  const deliveriesOf = (endpointId: string) =>
    database.db
      .selectFrom('webhook_deliveries')
      .select(['id', 'event_id', 'status', 'attempts'])
      .where('endpoint_id', '=', endpointId)
      .execute();

  it('kill -9 mid-delivery, then a restart: every event arrives, repeated only where it was not acknowledged', async () => {
    const { receiver, endpoint } = await endpointFor(['task.created']);
    // The first deliveries are acknowledged, the next ones held open: the kill lands while they are in flight.
    receiver.script([204, 204, 204, 204, 204], 'hang');
    const first = start();
    const events = await eventIdsOf(await createTasks(await first.listening, 20));
    assert.equal(events.length, 20);
    await receiver.waitFor(8, 30_000);
    // At least once cannot tell an acknowledgement the killed process never recorded from one it did not get; kill it
    // once the five answered deliveries are recorded, so a repeat below can only be of an unanswered one.
    await until(
      async () => (await deliveriesOf(endpoint.id)).filter((d) => d.status === 'succeeded').length === 5,
      30_000,
      'the five answered deliveries to be recorded',
    );
    first.child.kill('SIGKILL');
    await first.exited;

    receiver.script([], 204);
    const second = start();
    await second.listening;
    await until(
      async () => (await deliveriesOf(endpoint.id)).filter((d) => d.status === 'succeeded').length === 20,
      AFTER_RESTART_MS,
      'every delivery to succeed after the restart',
    );

    const acknowledged = receiver.received.filter((r) => r.status !== 'hang');
    assert.deepEqual(
      [...new Set(acknowledged.map((r) => r.webhookId))].sort(),
      [...events].sort(),
      'every event was acknowledged',
    );
    assert.equal(acknowledged.length, 20, 'no event was acknowledged twice');
    for (const delivery of receiver.received) {
      assert.equal(delivery.verifiedWith, 0, 'signed with the endpoint secret');
      assert.equal(delivery.webhookId, delivery.event.id);
      assertEventConforms(delivery.event);
    }
    // A repeated webhook-id is a retry of a request the receiver never answered, not a second delivery.
    const byId = new Map<string, typeof receiver.received>();
    for (const request of receiver.received)
      byId.set(request.webhookId, [...(byId.get(request.webhookId) ?? []), request]);
    for (const [id, requests] of byId)
      assert.ok(
        requests.slice(0, -1).every((r) => r.status === 'hang'),
        `${id} was repeated after an acknowledgement`,
      );
    assert.ok(
      [...byId.values()].some((requests) => requests.length > 1),
      'some delivery was cut by the kill and retried',
    );
  });

  it('two worker processes on one queue never make the same attempt twice', async () => {
    const { receiver, endpoint } = await endpointFor(['task.created']);
    const web = start(['--role', 'web']);
    const baseUrl = await web.listening;
    const workers = [start(['--role', 'worker']), start(['--role', 'worker'])];
    await Promise.all(workers.map((w) => w.waitFor(/delivering webhooks/)));
    const events = await eventIdsOf(await createTasks(baseUrl, 40));
    await receiver.waitFor(40, 60_000);
    await until(
      async () => (await deliveriesOf(endpoint.id)).filter((d) => d.status === 'succeeded').length === 40,
      30_000,
      'every delivery to succeed',
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(receiver.received.length, 40, 'one request per event');
    assert.deepEqual(receiver.received.map((r) => r.webhookId).sort(), [...events].sort());
    assert.ok((await deliveriesOf(endpoint.id)).every((d) => d.attempts === 1));
    // A worker-role process stops on SIGTERM like a web one: cleanly, within its deadline.
    workers[0]!.child.kill('SIGTERM');
    assert.equal(await workers[0]!.exited, 0);
  });

  it('a worker-role process attempts an event committed through a web process within seconds, its poll set to a minute', async () => {
    const { receiver } = await endpointFor(['task.created']);
    const minutePoll = { WEBHOOK_POLL_MS: '60000' };
    const web = start(['--role', 'web'], minutePoll);
    const baseUrl = await web.listening;
    const worker = start(['--role', 'worker'], minutePoll);
    await worker.waitFor(/delivering webhooks/);
    // Only the commit's NOTIFY, from the web process to the worker's listening connection, can bring these within the
    // bound: the worker's relay and its attempt slots would otherwise look again in a minute. The bound is a third
    // of that minute, generous for a machine doing twice its work; an event takes milliseconds.
    for (let n = 1; n <= 3; n++) {
      const sentAt = Date.now();
      const [event] = await eventIdsOf(await createTasks(baseUrl, 1));
      const received = await receiver.waitFor(n, NOTIFIED_WITHIN_MS);
      assert.equal(received.at(-1)!.webhookId, event);
      assert.ok(received.at(-1)!.receivedAt.getTime() - sentAt < NOTIFIED_WITHIN_MS);
    }
  });

  it('a process whose delivery settings differ from the live delivering processes refuses to start, in one line, and starts once they stopped', async () => {
    // The live worker reaches private receivers; one without WEBHOOK_ALLOW_PRIVATE_TARGETS would take its jobs and fail
    // them. The earlier tests' processes were killed without a stop: start once their registrations are gone.
    await database.db.deleteFrom('webhook_delivery_processes').execute();
    const { receiver } = await endpointFor(['task.created']);
    const web = start(['--role', 'web']);
    const baseUrl = await web.listening;
    const allowed = start(['--role', 'worker']);
    await allowed.waitFor(/delivering webhooks/);
    const refused = start(['--role', 'worker'], { WEBHOOK_ALLOW_PRIVATE_TARGETS: '0' });
    assert.equal(await refused.exited, 1);
    const lines = refused
      .output()
      .split('\n')
      .filter((line) => line.trim() !== '');
    assert.equal(lines.length, 1, refused.output());
    assert.match(
      lines[0]!,
      /webhook delivery settings differ .*theirs: WEBHOOK_ALLOW_PRIVATE_TARGETS=1; this one: WEBHOOK_ALLOW_PRIVATE_TARGETS=0/,
    );
    // The live processes kept their jobs: an event still reaches the private receiver, at its first attempt.
    const [event] = await eventIdsOf(await createTasks(baseUrl, 1));
    const [received] = await receiver.waitFor(1, 10_000);
    assert.equal(received!.webhookId, event);
    // Once the delivering process has stopped (a web-role process delivers nothing), other settings may start.
    allowed.child.kill('SIGTERM');
    assert.equal(await allowed.exited, 0);
    const changed = start(['--role', 'worker'], { WEBHOOK_ALLOW_PRIVATE_TARGETS: '0' });
    await changed.waitFor(/delivering webhooks/);
    // Its stop leaves the live processes, so the next test's settings may start at once.
    changed.child.kill('SIGTERM');
    assert.equal(await changed.exited, 0);
  });

  it('a receiver failing several attempts gets the same event until it accepts', async () => {
    const { receiver, endpoint } = await endpointFor(['task.created']);
    receiver.script([500, 502, 'hang', 500], 204);
    const server = start();
    const [event] = await eventIdsOf(await createTasks(await server.listening, 1));
    const received = await receiver.waitFor(5, 60_000);
    assert.deepEqual(
      received.map((r) => r.webhookId),
      Array(5).fill(event),
    );
    assert.ok(received.every((r) => r.verifiedWith === 0));
    await until(
      async () => (await deliveriesOf(endpoint.id))[0]?.status === 'succeeded',
      10_000,
      'the delivery to succeed',
    );
    const attempts = await database.db
      .selectFrom('webhook_attempts')
      .select(['response_status', 'error'])
      .where('delivery_id', '=', (await deliveriesOf(endpoint.id))[0]!.id)
      .orderBy('started_at')
      .execute();
    assert.deepEqual(
      attempts.map((a) => a.response_status),
      [500, 502, null, 500, 204],
    );
  });
});
