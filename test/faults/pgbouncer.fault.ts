// The real server behind a real PgBouncer in transaction mode (Debian's package, started here from a generated ini):
// DATABASE_POOLER=transaction with named prepared statements off, LISTEN and the start-up lock on DATABASE_SESSION_URL
// (PostgreSQL itself). Two processes start together through it and migrate once; the smoke set passes on each; a
// revocation, a plan change (a payment), a leaderboard's and /stats' change made through one process hold in the other
// once the commit's NOTIFY (sent by a transaction through the pooler) drops its caches, milliseconds later; webhook
// events are delivered once each by the two processes' workers sharing pg-boss's queue through the pooler.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { connect, type Db } from '../../db/connect.ts';
import { LISTENER_APPLICATION_NAME } from '../../db/notifications.ts';
import { setContractPlan } from '../../db/queries/users.ts';
import { createThrowawayDatabase, type ThrowawayDatabase } from '../../db/throwaway-database.ts';
import { issueApiKey } from '../../server/auth/api-keys.ts';
import { secretBox } from '../../server/auth/secret-box.ts';
import { createDemoStudent, DEMO_STUDENT } from '../../app/demo-student.ts';
import { startServerProcess, TEST_SECRETS_KEY, type ServerProcess } from '../support/server-process.ts';
import { insertEndpoint } from '../services/webhooks/fixtures.ts';
import { startReceiver, type Receiver } from '../services/webhooks/receiver.ts';
import { pgbouncerBinary, startPgBouncer, type PgBouncer } from './pgbouncer-process.ts';
import {
  createTask,
  expectStatus,
  heldEverywhere,
  minuteQuota,
  payPlus,
  PAYMENT_PROVIDER_SECRET,
  runSmokeSet,
  send,
  studentWithKey,
  type Keys,
} from './pgbouncer-smoke.ts';
import { requiredEnv, ROOMY, until } from './support/fixture.ts';

const box = secretBox(Buffer.from(TEST_SECRETS_KEY, 'base64'));

describe('behind PgBouncer in transaction mode', function () {
  this.timeout(120_000);
  const serverUrl = requiredEnv('DATABASE_URL');
  const redisUrl = requiredEnv('REDIS_URL');
  let throwaway: ThrowawayDatabase;
  let bouncer: PgBouncer;
  let db: Db;
  let name: string;
  let keys: Keys;
  let studentId: string;
  const servers: ServerProcess[] = [];
  const receivers: Receiver[] = [];
  let one: string;
  let two: string;

  const start = (env: Record<string, string> = {}) => {
    const server = startServerProcess({
      DATABASE_URL: bouncer.urlFor(name),
      DATABASE_POOLER: 'transaction',
      DATABASE_SESSION_URL: throwaway.url,
      REDIS_URL: redisUrl,
      REDIS_KEY_PREFIX: `sc-pgbouncer-${randomUUID().slice(0, 8)}:`,
      PUBLIC_URL: 'http://localhost:3000',
      PAYMENT_PROVIDER_SECRET,
      LOG_LEVEL: 'info',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
      WEBHOOK_RETRY_SCALE: '0.001',
      WEBHOOK_POLL_MS: '500',
      SHUTDOWN_DRAIN_SECONDS: '0',
      ...env,
    });
    servers.push(server);
    return server;
  };

  before(async function () {
    pgbouncerBinary();
    throwaway = await createThrowawayDatabase(serverUrl, 'sc_fault_pgbouncer');
    name = new URL(throwaway.url).pathname.slice(1);
    // Fewer server connections than the two processes' pools hold: transactions of both share each one.
    bouncer = await startPgBouncer({ serverUrl, poolSize: 4 });
    db = connect({ databaseUrl: throwaway.url });
    const processes = [start(), start()];
    [one, two] = (await Promise.all(processes.map((p) => p.listening))) as [string, string];
    const migratedBy = processes.filter((p) => p.output().includes('"msg":"migrated"'));
    assert.equal(migratedBy.length, 1, 'one process migrated, under the start-up lock held on its session connection');
    for (const p of processes)
      assert.doesNotMatch(p.output(), /"level":(40|50)/, `no warning or error at start:\n${p.output()}`);

    const now = new Date();
    const partner = await issueApiKey(db, { name: 'pgbouncer suite', per_minute: ROOMY, per_day: ROOMY });
    const student = await createDemoStudent(db, now, box);
    studentId = (await setContractPlan(db, DEMO_STUDENT.email, {
      per_minute: ROOMY,
      per_day: ROOMY,
      ai_per_hour: ROOMY,
    }))!;
    keys = { studentKey: student.key, partnerKey: partner.key };
  });
  after(async () => {
    for (const server of servers.splice(0))
      if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
    await Promise.all([...servers.map((s) => s.exited), ...receivers.splice(0).map((r) => r.close())]);
    await db?.destroy();
    await bouncer?.stop();
    await throwaway?.drop();
  });

  it('passes the smoke set through the pooler on both processes, each listening on its own session connection', async () => {
    const before = await bouncer.transactions(name);
    const reachingDatabase = (await runSmokeSet(one, keys)) + (await runSmokeSet(two, keys));
    assert.ok(
      (await bouncer.transactions(name)) - before >= reachingDatabase,
      "every student's request ran its statements through PgBouncer",
    );
    const { rows } = await sql<{
      query: string;
    }>`select query from pg_stat_activity where datname = ${name} and application_name = ${LISTENER_APPLICATION_NAME}`.execute(
      db,
    );
    assert.equal(rows.length, 2, 'one listening connection per process, straight to PostgreSQL');
    for (const row of rows) assert.match(row.query, /^LISTEN /);
  });

  it("drops cached principals, plans, leaderboards and /stats in the other process as its commit's NOTIFY arrives", async () => {
    // A personal key made and revoked through one process, used (and so cached) in both first.
    const made = await expectStatus(
      send(one, keys.studentKey, 'POST', '/api/users/me/api-keys', {
        name: 'revoked through one',
        scopes: ['tasks:read'],
      }),
      201,
      'create a key',
    );
    for (const base of [one, two, one, two])
      await expectStatus(send(base, made.key, 'GET', '/api/tasks'), 200, 'the new key');
    await expectStatus(send(one, keys.studentKey, 'DELETE', `/api/users/me/api-keys/${made.id}`), 204, 'revoke it');
    const revoked = await heldEverywhere(
      [two, one],
      async (base) => (await send(base, made.key, 'GET', '/api/tasks')).status === 401,
    );

    // A payment through one process moves a student from the free plan (60 a minute) to plus (600).
    const student = await studentWithKey(db, 'paying');
    for (const base of [one, two]) assert.equal(await minuteQuota(base, student.key), '60');
    await payPlus(one, student.email);
    const planned = await heldEverywhere([two, one], async (base) => (await minuteQuota(base, student.key)) === '600');

    // The global leaderboard and /stats, read (and kept) in both, then changed.
    const top = async (base: string) =>
      (await expectStatus(send(base, keys.partnerKey, 'GET', '/api/v1/leaderboards/global'), 200, 'leaderboard'))[0];
    const decks = async (base: string) =>
      (await expectStatus(send(base, keys.partnerKey, 'GET', '/api/v1/stats'), 200, 'stats')).flashcard_decks as number;
    const counted = await decks(one);
    assert.equal(await decks(two), counted);
    await top(one);
    await top(two);
    await db.updateTable('users').set({ xp: 10_000_000 }).where('id', '=', studentId).execute();
    await expectStatus(
      send(one, keys.studentKey, 'POST', '/api/flashcards/decks', { title: 'counted' }),
      201,
      'a deck',
    );
    const ranked = await heldEverywhere(
      [two, one],
      async (base) => (await top(base)).xp === 10_000_000 && (await decks(base)) === counted + 1,
    );
    console.log(`      in both processes: revocation ${revoked}; plan ${planned}; leaderboard and /stats ${ranked}`);
  });

  it('delivers every webhook event once, the two processes sharing the job queue through the pooler', async () => {
    const receiver = await startReceiver();
    receivers.push(receiver);
    const endpoint = await insertEndpoint(
      db,
      box,
      { user_id: studentId },
      { url: receiver.url, event_types: ['task.created'] },
    );
    receiver.secrets.push(endpoint.secret);
    const tasks = await Promise.all(
      Array.from({ length: 20 }, (_, i) => createTask(i % 2 ? one : two, keys.studentKey, `hook ${i}`)),
    );
    await receiver.waitFor(20, 60_000);
    await until(
      async () =>
        (
          await db
            .selectFrom('webhook_deliveries')
            .select('id')
            .where('endpoint_id', '=', endpoint.id)
            .where('status', '=', 'succeeded')
            .execute()
        ).length === 20,
      30_000,
      'every delivery recorded as succeeded',
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    const delivered = receiver.received.map((r) => (r.event.data as { object: { id: string } }).object.id);
    assert.deepEqual([...delivered].sort(), [...tasks].sort(), 'each event once');
    assert.ok(receiver.received.every((r) => r.verifiedWith === 0));
  });

  it('refuses to start through the pooler when it is not declared, saying which settings to set', async () => {
    const undeclared = start({ DATABASE_POOLER: 'none', DATABASE_SESSION_URL: '' });
    assert.equal(await undeclared.exited, 1);
    assert.match(
      undeclared.output(),
      /could not start: a connection pooler \(PgBouncer\) refused the statement_timeout startup parameter: .*DATABASE_POOLER=transaction/,
    );
  });

  it('warns at start when statements through the pooler run without a statement_timeout', async () => {
    const unbounded = await startPgBouncer({ serverUrl, poolSize: 2, statementTimeoutMs: null });
    try {
      const server = start({ DATABASE_URL: unbounded.urlFor(name) });
      await server.listening;
      assert.match(server.output(), /"level":40,[^\n]*statements through the pooler run without a statement_timeout/);
      server.child.kill('SIGTERM');
      assert.equal(await server.exited, 0);
    } finally {
      await unbounded.stop();
    }
  });

  it('runs with named prepared statements on behind a PgBouncer that keeps them (>= 1.21, max_prepared_statements)', async function () {
    const version = /PgBouncer (\d+)\.(\d+)/.exec(execFileSync(pgbouncerBinary(), ['--version'], { encoding: 'utf8' }));
    const [major, minor] = [Number(version?.[1]), Number(version?.[2])];
    if (major === 1 && minor < 21) this.skip(); // this machine's PgBouncer mixes named statements up between clients
    const keeping = await startPgBouncer({ serverUrl, poolSize: 4, settings: ['max_prepared_statements = 200'] });
    try {
      const server = start({ DATABASE_URL: keeping.urlFor(name), DATABASE_PREPARED_STATEMENTS: 'on' });
      const base = await server.listening;
      await runSmokeSet(base, keys);
      await runSmokeSet(base, keys);
      server.child.kill('SIGTERM');
      assert.equal(await server.exited, 0);
    } finally {
      await keeping.stop();
    }
  });
});
