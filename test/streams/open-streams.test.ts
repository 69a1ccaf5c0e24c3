// The open streams of an account (services/streams/open-streams.ts) on the run's engine, with short leases: a process
// renews the leases of its streams, a stream whose row is deleted under it (its grant revoked, say) ends at the next
// renewal, and concurrent opens of one account through several processes never pass the bound together.
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { sql } from 'kysely';
import type pg from 'pg';
import { connect } from '../../db/connect.ts';
import { notificationsFor, type Notifications } from '../../db/notifications.ts';
import { openStreams, type StreamRevocation } from '../../services/streams/open-streams.ts';
import type { Credential } from '../../server/auth/principal.ts';
import { LimitError } from '../../domain/errors.ts';
import { contractClient } from '../support/contract.ts';
import { newStudent } from '../support/general-app.ts';
import { buildApp } from '../support/partner-app.ts';
import { testDatabase } from '../support/shared-database.ts';

const SHORT = { max: 3, leaseMs: 2_000, renewMs: 50 };

describe('open streams', () => {
  let notifications: Notifications;
  before(() => {
    const { db, url } = testDatabase();
    notifications = notificationsFor(db, url, { logger: pino({ level: 'silent' }), timeoutMs: 5_000 });
  });
  after(() => notifications.close());

  /** An account with a personal key, as a stream's holder. */
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
    return { user_id: student.id, credential };
  }
  const expiries = async (userId: string) =>
    (
      await sql<{
        expires_at: Date;
      }>`select expires_at from open_streams where user_id = ${userId} order by id`.execute(testDatabase().db)
    ).rows.map((r) => r.expires_at.getTime());

  it('renews the leases of its streams, and ends a stream whose row was deleted under it (lease_lost)', async () => {
    const streams = openStreams(testDatabase().db, notifications, {
      limits: SHORT,
      onError: (error) => assert.fail(String(error)),
    });
    const account = await holder();
    const endings: StreamRevocation[] = [];
    const kept = await streams.take(account, 'readiness', (why) => endings.push(why));
    const [first] = await expiries(account.user_id);
    await until(async () => ((await expiries(account.user_id))[0] ?? 0) > first!, 'the lease was pushed forward');

    await streams.take(account, 'readiness', (why) => endings.push(why));
    assert.equal(streams.held, 2);
    await sql`delete from open_streams where id = (select id from open_streams where user_id = ${account.user_id} order by opened_at desc, id limit 1)`.execute(
      testDatabase().db,
    );
    await until(() => endings.length === 1, 'the stream whose row is gone was told');
    assert.deepEqual(endings, ['lease_lost']);
    assert.equal(streams.held, 1);
    await kept.release();
    await kept.release();
    assert.equal(streams.held, 0);
    assert.deepEqual(await expiries(account.user_id), []);
  });

  it('never lets concurrent opens through several processes pass the bound together', async () => {
    const processes = [0, 1, 2].map(() =>
      openStreams(testDatabase().db, notifications, { limits: SHORT, onError: () => {} }),
    );
    const account = await holder();
    const attempts = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) => processes[i % 3]!.take(account, 'readiness', () => {})),
    );
    const taken = attempts.filter((a) => a.status === 'fulfilled');
    const refused = attempts.flatMap((a) => (a.status === 'rejected' ? [a.reason] : []));
    assert.equal(taken.length, SHORT.max);
    assert.ok(
      refused.every(
        (r) => r instanceof LimitError && r.code === 'too_many_streams' && Number(r.bound.retryAfterSeconds) >= 1,
      ),
    );
    for (const place of taken) await (place as PromiseFulfilledResult<{ release(): Promise<void> }>).value.release();
  });

  it("puts one account's burst of opens in line in memory: it holds at most one pool connection, and nobody waits for the pool", async function () {
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
      // Renewals of the places taken would use the pool beside the opens: none falls within this burst.
      const streams = openStreams(db, notifications, {
        limits: { ...SHORT, leaseMs: 60_000, renewMs: 30_000 },
        onError: () => {},
      });
      const [busy, other] = [await holder(), await holder()];
      // A burst as large as one minute of a free account's requests, and meanwhile one open of another account.
      const burst = Array.from({ length: 60 }, () => streams.take(busy, 'readiness', () => {}));
      const others = streams.take(other, 'readiness', () => {});
      const attempts = await Promise.allSettled([...burst, others]);
      const taken = attempts.filter((a) => a.status === 'fulfilled');
      const refused = attempts.flatMap((a) => (a.status === 'rejected' ? [a.reason] : []));
      assert.equal((await Promise.allSettled([others]))[0]!.status, 'fulfilled', "the other account's open was served");
      assert.equal(taken.length, SHORT.max + 1);
      assert.ok(
        refused.every(
          (r) => r instanceof LimitError && r.code === 'too_many_streams' && Number(r.bound.retryAfterSeconds) >= 1,
        ),
      );
      // One connection for the burst's open in progress, one for the other account's.
      assert.ok(mostCheckedOut <= 2, `the opens held ${mostCheckedOut} pool connections at once`);
      assert.equal(mostWaiting, 0, 'a request waited for a pool connection');
      for (const place of taken) await (place as PromiseFulfilledResult<{ release(): Promise<void> }>).value.release();
    } finally {
      await db.destroy();
    }
  });
});

async function until(condition: () => boolean | Promise<boolean>, what: string, withinMs = 5_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
