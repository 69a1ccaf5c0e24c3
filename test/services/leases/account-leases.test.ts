// The one lease mechanism (services/leases/account-leases.ts) on the run's engine, with short leases: exactly the
// bound of concurrent takes through several processes succeed, a group holds its own bound, a release frees its
// place, renewals keep a lease past its time, a lease whose row is gone ends (lease_lost), a revoked credential ends
// its leases, an account's burst waits in memory, and the lease of a process killed with SIGKILL lapses.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { pino } from 'pino';
import { sql } from 'kysely';
import type pg from 'pg';
import { connect } from '../../../db/connect.ts';
import { notificationsFor, type Notifications } from '../../../db/notifications.ts';
import {
  accountLeases,
  type Lease,
  type LeaseLoss,
  type LeaseRefusal,
} from '../../../services/leases/account-leases.ts';
import type { Credential } from '../../../server/auth/principal.ts';
import { contractClient } from '../../support/contract.ts';
import { newStudent } from '../../support/general-app.ts';
import { buildApp } from '../../support/partner-app.ts';
import { testDatabase } from '../../support/shared-database.ts';

// Leases that renew within a test's time: the renewal case watches them outlive it.
const TTL_MS = 1_500;
// Leases that must not lapse during a test: a loaded machine can delay a renewal past a short time, and a lapsed
// lease frees its place, which a case about the bounds would read as a place never held.
const HELD_TTL_MS = 60_000;
const STREAM = { kind: 'stream', limit: 3 };

describe('account leases', () => {
  let notifications: Notifications;
  before(() => {
    const { db, url } = testDatabase();
    notifications = notificationsFor(db, url, { logger: pino({ level: 'silent' }), timeoutMs: 5_000 });
  });
  after(() => notifications.close());

  /** One process's leases, on `db` (the run's database by default). */
  const leasesOf = (db = testDatabase().db, ttlMs = HELD_TTL_MS) =>
    accountLeases(db, notifications, { ttlMs, onError: (error) => assert.fail(String(error)) });

  /** An account with a personal key, as a holder, and how to revoke the key. */
  async function holder() {
    const app = await buildApp();
    const student = await newStudent(app);
    const key = (
      await contractClient(app)
        .post('/api/users/me/api-keys')
        .set(student.headers)
        .send({ name: 'k', scopes: ['exams:read'] })
        .expect(201)
    ).body;
    const credential: Credential = { kind: 'api_key', key_id: key.id, prefix: key.prefix, grant_id: null };
    const revoke = () =>
      contractClient(app).delete(`/api/users/me/api-keys/${key.id}`).set(student.headers).expect(204);
    return { user_id: student.id, credential, revoke };
  }
  const expiries = async (userId: string) =>
    (
      await sql<{
        expires_at: Date;
      }>`select expires_at from account_leases where user_id = ${userId} order by id`.execute(testDatabase().db)
    ).rows.map((r) => r.expires_at.getTime());
  const held = (outcome: Lease | LeaseRefusal): Lease => {
    assert.ok('id' in outcome, `refused: ${JSON.stringify(outcome)}`);
    return outcome;
  };

  it('lets exactly the bound of concurrent takes through several processes succeed, and a release frees a place', async () => {
    const processes = [leasesOf(), leasesOf(), leasesOf()];
    const account = await holder();
    const outcomes = await Promise.all(
      Array.from({ length: 12 }, (_, i) => processes[i % 3]!.take(account, STREAM, () => {})),
    );
    const taken = outcomes.filter((o): o is Lease => 'id' in o);
    assert.equal(taken.length, STREAM.limit);
    assert.ok(outcomes.every((o) => 'id' in o || (o.refused === 'account' && o.retryAfterMs >= 0)));
    assert.equal(
      processes.reduce((sum, p) => sum + p.held, 0),
      STREAM.limit,
    );

    await taken[0]!.release();
    await taken[0]!.release();
    const again = held(await processes[1]!.take(account, STREAM, () => {}));
    for (const lease of [...taken, again]) await lease.release();
    assert.deepEqual(await expiries(account.user_id), []);
  });

  it('holds a group to its own bound: one reply per conversation, two per account', async () => {
    const leases = leasesOf();
    const account = await holder();
    const reply = (conversation: string) =>
      leases.take(account, { kind: 'ai_reply', group: conversation, limit: 2, perGroup: 1 }, () => {});
    // Two at once: as many as the account's line holds (a third would be refused by the line, before any count).
    const first = await Promise.all([reply('a'), reply('a')]);
    assert.equal(first.filter((o) => 'id' in o).length, 1);
    assert.ok(
      first.every((o) => 'id' in o || o.refused === 'group'),
      JSON.stringify(first),
    );
    const second = held(await reply('b'));
    const third = await reply('c');
    assert.ok('refused' in third && third.refused === 'account', JSON.stringify(third));
    for (const lease of [...first.filter((o): o is Lease => 'id' in o), second]) await lease.release();
  });

  it('renews its leases past their time, and ends a lease whose row was deleted under it (lease_lost)', async () => {
    const leases = leasesOf(testDatabase().db, TTL_MS);
    const account = await holder();
    const endings: LeaseLoss[] = [];
    const kept = held(await leases.take(account, STREAM, (why) => endings.push(why)));
    const [first] = await expiries(account.user_id);
    await until(
      async () => ((await expiries(account.user_id))[0] ?? 0) > first! + TTL_MS,
      'renewed past its first end',
    );
    const lost = held(await leases.take(account, STREAM, (why) => endings.push(why)));
    await sql`delete from account_leases where id = ${lost.id}`.execute(testDatabase().db);
    await until(() => endings.length === 1, 'the lease whose row is gone was told');
    assert.deepEqual(endings, ['lease_lost']);
    assert.equal(leases.held, 1);
    await kept.release();
    assert.equal(leases.held, 0);
  });

  it('ends the leases taken with a credential once it is revoked (credential_revoked)', async () => {
    const leases = leasesOf();
    const account = await holder();
    const endings: LeaseLoss[] = [];
    held(await leases.take(account, STREAM, (why) => endings.push(why)));
    held(await leases.take(account, { kind: 'export', limit: 1 }, (why) => endings.push(why)));
    await account.revoke();
    await until(() => endings.length === 2, 'both holders were told');
    assert.deepEqual(endings, ['credential_revoked', 'credential_revoked']);
    assert.equal(leases.held, 0);
  });

  it("puts one account's burst of takes in line in memory: it holds at most one pool connection, and nobody waits for the pool", async function () {
    const { url } = testDatabase();
    if (!url) this.skip(); // the embedded database has no pool to exhaust
    let pool: pg.Pool | undefined;
    const db = connect({ databaseUrl: url }, { observePool: (p) => void (pool = p) });
    let mostCheckedOut = 0;
    let mostWaiting = 0;
    const sample = () => {
      mostCheckedOut = Math.max(mostCheckedOut, pool!.totalCount - pool!.idleCount);
      mostWaiting = Math.max(mostWaiting, pool!.waitingCount);
    };
    pool!.on('acquire', sample);
    pool!.on('release', sample);
    try {
      // No renewal of the leases taken falls within the burst to use the pool beside the takes.
      const leases = leasesOf(db);
      const [busy, other] = [await holder(), await holder()];
      // A burst as large as one minute of a free account's requests, and meanwhile one take of another account.
      const outcomes = await Promise.all([
        ...Array.from({ length: 60 }, () => leases.take(busy, STREAM, () => {})),
        leases.take(other, STREAM, () => {}),
      ]);
      assert.ok('id' in outcomes.at(-1)!, "the other account's take was served");
      assert.equal(outcomes.filter((o) => 'id' in o).length, STREAM.limit + 1);
      // One connection for the burst's take in progress, one for the other account's.
      assert.ok(mostCheckedOut <= 2, `the takes held ${mostCheckedOut} pool connections at once`);
      assert.equal(mostWaiting, 0, 'a request waited for a pool connection');
      for (const lease of outcomes) if ('id' in lease) await lease.release();
    } finally {
      await db.destroy();
    }
  });

  it('frees the place of a process killed with SIGKILL once its lease lapses, and no sooner', async function () {
    const { url } = testDatabase();
    if (!url) this.skip(); // one process at a time opens the embedded database: no second process can hold a lease
    const account = await holder();
    const ttlMs = 3_000;
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'test/services/leases/support/lease-holder.ts',
        url,
        account.user_id,
        'export',
        '1',
        String(ttlMs),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      const [line] = (await once(child.stdout, 'data')) as [Buffer];
      assert.match(line.toString(), /^held /);
      const leases = leasesOf();
      const refused = await leases.take(account, { kind: 'export', limit: 1 }, () => {});
      assert.ok('refused' in refused, 'the live process holds the one lease');
      child.kill('SIGKILL');
      await once(child, 'exit');
      // Refused until its lease lapses, then taken: within one lease time of the kill, however loaded the machine.
      let taken: Lease | undefined;
      await until(
        async () => {
          const outcome = await leases.take(account, { kind: 'export', limit: 1 }, () => {});
          if ('id' in outcome) taken = outcome;
          return taken !== undefined;
        },
        'the dead process’s lease lapsed',
        ttlMs + 30_000,
      );
      await taken!.release();
    } finally {
      child.kill('SIGKILL');
    }
  });
});

async function until(condition: () => boolean | Promise<boolean>, what: string, withinMs = 15_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
