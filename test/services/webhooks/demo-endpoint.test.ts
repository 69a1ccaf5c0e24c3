// The demo student's webhook endpoint with a real delivery worker, as a fresh instance runs it: its settled test
// delivery is left alone, and what the demo sends it (a re-send here) opens its sealed secret, fails at DNS (its host
// is under .invalid), is recorded as a failed attempt (nothing logged) and waits for the retry schedule, the endpoint
// still enabled.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import pino from 'pino';
import { createDemoStudent } from '../../../app/demo-student.ts';
import { DEMO_SEED, seedDemo, seedReference } from '../../../db/seed/index.ts';
import { secretBox } from '../../../server/auth/secret-box.ts';
import { resendDelivery } from '../../../services/webhooks/queue.ts';
import { startDeliveryWorker, type DeliveryWorker } from '../../../services/webhooks/worker.ts';
import { createFreshDatabase, type TestDatabase } from '../../support/test-db.ts';
import { observedRelayPasses } from './relay-passes.ts';

const box = secretBox(randomBytes(32));

describe('the demo webhook endpoint', function () {
  this.timeout(60_000);
  let database: TestDatabase;
  let worker: DeliveryWorker | undefined;

  before(async function () {
    this.timeout(180_000);
    database = await createFreshDatabase();
    const now = new Date();
    await seedReference(database.db, { now });
    await seedDemo(database.db, { seed: DEMO_SEED, now });
    await createDemoStudent(database.db, now, box);
  });
  after(async () => {
    await worker?.stop();
    await database?.close();
  });

  const delivery = () =>
    database.db
      .selectFrom('webhook_deliveries')
      .innerJoin('webhook_endpoints', 'webhook_endpoints.id', 'webhook_deliveries.endpoint_id')
      .select(['webhook_deliveries.id', 'status', 'attempts', 'next_attempt_at', 'enabled', 'url'])
      .where('description', '=', 'Account warnings')
      .executeTakeFirstOrThrow();
  const attempts = (deliveryId: string) =>
    database.db
      .selectFrom('webhook_attempts')
      .select(['response_status', 'error', 'started_at', 'duration_ms'])
      .where('delivery_id', '=', deliveryId)
      .orderBy('started_at')
      .execute();

  it('leaves its settled delivery alone, and sends a re-sent one nowhere: it fails at DNS and waits for its retry', async () => {
    // The production settings: public targets only, the real retry schedule.
    const warnings: string[] = [];
    const passes = observedRelayPasses();
    worker = startDeliveryWorker({
      db: database.db,
      box,
      config: {
        allowPrivateTargets: false,
        attemptTimeoutMs: 5_000,
        retryScale: 1,
        pollMs: 500,
        attemptsPerProcess: 200,
      },
      logger: pino({ level: 'warn' }, { write: (line: string) => void warnings.push(line) }),
      lifecycle: passes.lifecycle,
    });
    const seeded = await delivery();
    assert.match(seeded.url, /^https:\/\/[^/]+\.invalid\//, 'a host that never resolves (RFC 6761)');
    // The worker's start swept the parked deliveries and its relay made a pass: nothing was due.
    await passes.passAfter(0);
    await passes.passAfter();
    assert.deepEqual({ ...(await delivery()), next_attempt_at: null }, { ...seeded, next_attempt_at: null });
    assert.equal(seeded.status, 'succeeded');
    assert.equal(seeded.attempts, 1);

    await database.db.transaction().execute((trx) => resendDelivery(trx, seeded.id));
    const deadline = Date.now() + 20_000;
    while ((await delivery()).attempts < 2) {
      assert.ok(Date.now() < deadline, 'the re-sent delivery is attempted');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const after = await delivery();
    assert.equal(after.status, 'pending', 'a failed attempt is retried later');
    const [, failed] = await attempts(seeded.id);
    // From the attempt's end, not from now: the schedule's first delay is 5 s, less a fifth at most.
    const ended = failed!.started_at.getTime() + failed!.duration_ms;
    assert.ok(
      after.next_attempt_at!.getTime() - ended >= 4_000,
      `the retry waits for the schedule's first delay: ${after.next_attempt_at!.toISOString()}`,
    );
    assert.equal(after.enabled, true);
    assert.equal(failed!.response_status, null);
    assert.match(failed!.error!, /ENOTFOUND|EAI_AGAIN/);
    // Nothing more until the retry is due: a relay pass that began after the attempt sent nothing.
    const pass = await passes.passAfter();
    if (performance.timeOrigin + pass.endedAt < after.next_attempt_at!.getTime())
      assert.equal(pass.sent, 0, 'no job before the retry is due');
    assert.equal((await delivery()).attempts, 2);
    const { rows } = await sql<{ jobs: string | number }>`
      select count(*) as jobs from pgboss.job where singleton_key = ${seeded.id} and state in ('created', 'retry', 'active')`.execute(
      database.db,
    );
    assert.equal(Number(rows[0]!.jobs), 0, 'no job waits for the retry before it is due');
    assert.deepEqual(warnings, [], 'a failed attempt is recorded, not logged');
  });
});
