// The embedded database's vacuum (services/maintenance/embedded-vacuum.ts): PGlite has no autovacuum, so the dead
// versions that thousands of updates of one student's row leave make the reads through its indexes read more pages
// until the service's own pass vacuums the tables. Measured on PGlite: the run's database on the default engine, an
// embedded database of the test's own on a PostgreSQL run (where the pass itself must not start: the server's
// autovacuum works).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { sql } from 'kysely';
import { pino } from 'pino';
import { embeddedDatabaseOf, type Db } from '../../db/connect.ts';
import { insertAccount } from '../../db/queries/profile.ts';
import { createLifecycle } from '../../server/process/lifecycle.ts';
import { startEmbeddedVacuum, vacuumEmbeddedOnce } from '../../services/maintenance/embedded-vacuum.ts';
import { testDatabase } from '../support/shared-database.ts';
import { deleteWithRooms } from '../support/query-fixture.ts';
import { createEmbeddedDatabase } from '../support/test-db.ts';

/** Updates of one student's row, as reviews and tasks make them (last_active_at, xp): thousands are weeks of use. */
const UPDATES = 3_000;

describe('the embedded database vacuum', () => {
  let db: Db;
  let ownDatabase = false;
  const students: string[] = [];

  before(async () => {
    ownDatabase = !embeddedDatabaseOf(testDatabase().db);
    db = ownDatabase ? await createEmbeddedDatabase() : testDatabase().db;
  });
  after(async () => {
    for (const id of students.splice(0)) await deleteWithRooms(db, id);
    if (ownDatabase) await db.destroy();
  });

  async function newStudent(): Promise<string> {
    const nickname = `vac_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
    const { id } = await insertAccount(db, {
      email: `${nickname}@example.com`,
      password_hash: 'never-verified',
      nickname,
      first_name: 'Vacuum',
      time_zone: 'UTC',
      country_code: null,
    });
    students.push(id);
    return id;
  }

  /**
   * The shared buffers (pages) that the leaderboard's read touches: the first ten students of users_xp_idx, in the
   * order readLeaderboard (db/queries/leaderboards.ts) reads them. Read twice and measured the second time: the first
   * read marks the index entries it found dead, and a board polled again and again reads past them as the second does.
   * (A lookup by the primary key hardly grows: an update that leaves the key as it was lets PostgreSQL delete the old
   * versions' entries of a full leaf page itself. An update of xp writes an entry under a new key each time.)
   */
  async function leaderboardBuffers(): Promise<number> {
    return db.transaction().execute(async (trx) => {
      // The table is small enough for a sequential scan and a sort; the read that matters is the index's.
      await sql`set local enable_seqscan = off`.execute(trx);
      await sql`set local enable_bitmapscan = off`.execute(trx);
      const explain = () =>
        sql<{ 'QUERY PLAN': Array<{ Plan: Record<string, any> }> }>`
        explain (analyze, buffers, format json) select id, xp from users order by xp desc, id limit 10`.execute(trx);
      await explain();
      const plan = (await explain()).rows[0]!['QUERY PLAN'][0]!.Plan;
      assert.equal(plan.Plans?.[0]?.['Index Name'], 'users_xp_idx', `the leaderboard's index: ${JSON.stringify(plan)}`);
      return plan['Shared Hit Blocks'] + plan['Shared Read Blocks'];
    });
  }

  /**
   * Hands this backend's pending statistics to the shared ones now. PostgreSQL flushes a backend's counts at most once
   * a second, so without this the last second of updates is counted only after the pass, which sets the dead count
   * to what it left and then has that second's updates added to it (a flaky "after" under a fast run).
   */
  async function flushStatistics(): Promise<void> {
    await sql`select pg_stat_force_next_flush()`.execute(db);
    await sql`select 1`.execute(db); // the flush asked for comes once a transaction has ended
  }

  /** The users table's dead row versions, as PostgreSQL's statistics count them. */
  async function deadVersions(): Promise<number> {
    const { rows } = await sql<{ dead: number }>`
      select n_dead_tup::int as dead from pg_stat_user_tables where relid = 'users'::regclass`.execute(db);
    return rows[0]!.dead;
  }

  it('a pass vacuums away the dead versions of a row updated thousands of times: the leaderboard reads fewer pages', async function () {
    this.timeout(120_000);
    const student = await newStudent();
    await vacuumEmbeddedOnce(db);
    const fresh = await leaderboardBuffers();

    // The board's leader studies on: each review or task writes the row's last_active_at and xp.
    const { top } = await db
      .selectFrom('users')
      .select((eb) => eb.fn.max('xp').as('top'))
      .executeTakeFirstOrThrow();
    // Each update its own transaction, as each review's or task's is; run inside the database (a DO block that
    // commits after each), since 3,000 round trips from here cost seconds of CPU that measure nothing of the vacuum.
    await sql`
      do $$ begin
        for i in 1..${sql.lit(UPDATES)} loop
          update users set last_active_at = ${sql.lit('2026-03-02T10:00:00Z')}::timestamptz + i * interval '1 second',
            xp = ${sql.lit(Number(top))} + i
          where id = ${sql.lit(student)};
          commit;
        end loop;
      end $$`.execute(db);
    await flushStatistics();
    const before = await leaderboardBuffers();
    const deadBefore = await deadVersions();

    const pass = await vacuumEmbeddedOnce(db);
    const after = await leaderboardBuffers();
    const deadAfter = await deadVersions();
    console.log(
      `      leaderboard read: ${fresh} buffers fresh, ${before} after ${UPDATES} updates of its leader, ${after} after the pass; users' dead versions ${deadBefore} -> ${deadAfter}; pass: ${pass.tables} tables in ${pass.ms} ms`,
    );

    assert.equal(pass.tables, pass.listed);
    assert.ok(pass.tables > 10, `every table of the service: ${pass.tables}`);
    assert.ok(
      deadBefore >= UPDATES / 5 && deadAfter <= deadBefore / 10,
      `the pass cleared the dead versions: ${deadBefore} before it, ${deadAfter} after`,
    );
    assert.ok(
      before >= fresh + 10,
      `the updates' dead versions cost the read pages: ${fresh} fresh, ${before} after the updates`,
    );
    // Back to about its fresh cost: the index keeps the level the updates' entries grew it by, and the leader's row
    // may sit on a page of its own.
    assert.ok(
      after <= fresh + 3 && after * 4 <= before,
      `the pass gave the read back about its fresh cost: ${fresh} fresh, ${after} after the pass (${before} before it)`,
    );
  });

  it('runs on a timer only on the embedded database, holds the stop for its pass and ends it at the next table', async function () {
    this.timeout(30_000);
    if (ownDatabase) {
      // PostgreSQL: the server's autovacuum does this; nothing is started.
      const started = startEmbeddedVacuum({
        db: testDatabase().db,
        lifecycle: createLifecycle(),
        logger: pino({ level: 'silent' }),
      });
      assert.equal(started, undefined);
    }
    const lines: Array<{ msg: string; tables: number; listed?: number; ms: number }> = [];
    const logger = pino(
      { level: 'info' },
      new Writable({ write: (chunk, _encoding, done) => (lines.push(JSON.parse(String(chunk))), done()) }),
    );
    const lifecycle = createLifecycle();
    const vacuum = startEmbeddedVacuum({ db, lifecycle, logger, firstAfterMs: 0, everyMs: 20 });
    assert.ok(vacuum, 'started on the embedded database');

    // Whole passes, one after another, each logged with its tables and duration.
    while (lines.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.deepEqual(
      lines.slice(0, 2).map((line) => line.msg),
      ['vacuumed the embedded database', 'vacuumed the embedded database'],
    );
    assert.ok(lines[0]!.tables > 10 && lines[0]!.ms >= 0, JSON.stringify(lines[0]));

    // The stop begins while a pass runs: the lifecycle holds the stop for it, and it ends before its next table.
    while (lifecycle.running === 0) await new Promise((resolve) => setImmediate(resolve));
    const logged = lines.length;
    lifecycle.beginDrain();
    await lifecycle.idle();
    await vacuum.stop();
    assert.equal(lines.length, logged + 1);
    const last = lines.at(-1)!;
    assert.equal(last.msg, 'vacuum of the embedded database cut short: the process is stopping');
    assert.ok(last.tables < last.listed!, JSON.stringify(last));

    // No pass after the stop.
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(lines.length, logged + 1);
    assert.equal(lifecycle.running, 0);
  });

  it('a pass asked to stop ends before its next table', async () => {
    let asked = 0;
    const pass = await vacuumEmbeddedOnce(db, () => ++asked > 2);
    assert.equal(pass.tables, 2);
    assert.ok(pass.listed > 2);
  });
});
