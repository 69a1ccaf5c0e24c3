// The counters behind /api/v1/stats (db/migrations/20261124_0007_stats_counters.ts, db/queries/stats.ts) against
// what count(*) says: after single writes, bulk writes, cascades, a rollback, a truncate, a fold, and (on
// PostgreSQL) twenty connections writing and reading at once. One fresh database for the file (a fresh embedded one
// costs seconds); every check compares with count(*) at that moment, so the tests do not lean on each other.
import assert from 'node:assert/strict';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { Db } from '../../../db/connect.ts';
import type { Database } from '../../../db/schema.ts';
import { FOLD_ABOVE, getServiceStats } from '../../../db/queries/stats.ts';
import { statsByCounting } from '../../support/stats-by-counting.ts';
import { createFreshDatabase, type TestDatabase } from '../../support/test-db.ts';

const LONG_AGO = new Date('2000-01-01T00:00:00Z');
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/**
 * Windows of activity to check: everything; the last 30 days (what /stats asks); one starting on a whole hour; and
 * windows whose first hour is cut in the middle, where the partial hour is counted on the index.
 */
function windowsAround(now: Date): Date[] {
  const onTheHour = Math.floor(now.getTime() / HOUR) * HOUR;
  return [
    LONG_AGO,
    new Date(now.getTime() - 30 * 24 * HOUR),
    new Date(onTheHour - 5 * HOUR),
    new Date(onTheHour - 90 * MINUTE + 17_000),
    new Date(now.getTime() - 7 * MINUTE),
  ];
}

async function assertCountersMatch(db: Db) {
  for (const since of windowsAround(new Date())) {
    assert.deepEqual(
      await getServiceStats(db, since),
      await statsByCounting(db, since),
      `active since ${since.toISOString()}`,
    );
  }
}

const hourRows = async (db: Db) =>
  Number((await sql<{ n: number }>`select count(*) as n from activity_hour_deltas`.execute(db)).rows[0]!.n);

/** A student with a deck, a conversation of two messages and a study room; returns the student's id. */
async function addStudent(db: Db, nickname: string): Promise<string> {
  const { rows } = await sql<{ id: string }>`
    with u as (insert into users (nickname, first_name, last_active_at) values (${nickname}, 'Test', now()) returning id),
    d as (insert into flashcard_decks (user_id, title) select id, 'Deck' from u),
    c as (insert into ai_conversations (user_id, title) select id, 'Chat' from u returning id, user_id),
    m as (insert into ai_messages (user_id, conversation_id, role, content) select user_id, id, r, 'hi' from c, unnest(array['user', 'assistant']) as r),
    r as (insert into study_rooms (name, created_by) select 'Room', id from u)
    select id from u`.execute(db);
  return rows[0]!.id;
}

describe('stats counters', () => {
  let database: TestDatabase;
  before(async () => {
    database = await createFreshDatabase();
  });
  after(async () => {
    await database?.close();
  });

  it('follow inserts, bulk inserts and deletes that cascade', async () => {
    const { db } = database;
    await sql`insert into universities (name, short_name, city, country, student_count, default_academic_system, default_gpa_scale)
      values ('U', 'U', 'Almaty', 'KZ', 1000, 'credit', '4.0')`.execute(db);
    const users = async () => (await getServiceStats(db, LONG_AGO)).total_users;
    const start = await users();
    const first = await addStudent(db, 'first');
    await addStudent(db, 'second');
    await sql`insert into users (nickname, first_name) select 'bulk_' || i, 'Bulk' from generate_series(1, 500) as i`.execute(
      db,
    );
    await assertCountersMatch(db);
    // The student's deck and messages go by the foreign keys' cascade; the room stays (created_by set null).
    await db.deleteFrom('users').where('id', '=', first).execute();
    await db.deleteFrom('users').where('nickname', 'like', 'bulk_1%').execute();
    await db.deleteFrom('users').where('nickname', '=', 'nobody').execute();
    await assertCountersMatch(db);
    assert.equal((await users()) - start, 390);
  });

  it('do not move for a transaction that rolls back', async () => {
    const { db } = database;
    await addStudent(db, 'kept');
    const before = await getServiceStats(db, LONG_AGO);
    await assert.rejects(
      db.transaction().execute(async (trx) => {
        await addStudent(trx, 'gone');
        await trx.deleteFrom('users').where('nickname', '=', 'kept').execute();
        throw new Error('roll back');
      }),
      /roll back/,
    );
    assert.deepEqual(await getServiceStats(db, LONG_AGO), before);
    await assertCountersMatch(db);
  });

  it('follow a truncate', async () => {
    const { db } = database;
    await addStudent(db, 'one');
    await addStudent(db, 'two');
    await sql`truncate study_rooms cascade`.execute(db); // and the rooms' members, sessions and moves with them
    await sql`truncate ai_conversations cascade`.execute(db); // and ai_messages with them
    await assertCountersMatch(db);
    assert.equal((await getServiceStats(db, LONG_AGO)).ai_messages_total, 0);
  });

  it('fold the deltas into one row per table, past the threshold only, and keep the totals', async () => {
    const { db } = database;
    for (let i = 0; i < FOLD_ABOVE / 4; i++) await addStudent(db, `fold${i}`);
    const deltas = async () =>
      Number((await sql<{ n: number }>`select count(*) as n from stat_counter_deltas`.execute(db)).rows[0]!.n);
    assert.ok((await deltas()) > FOLD_ABOVE);
    await assertCountersMatch(db);
    assert.ok((await deltas()) <= 5, 'folded to one row per counted table');
    // Below the threshold a read writes nothing: it takes no transaction id, so it costs no commit.
    const assigned = await db.transaction().execute(async (trx) => {
      await getServiceStats(trx, LONG_AGO);
      return (await sql<{ xid: string | null }>`select pg_current_xact_id_if_assigned()::text as xid`.execute(trx))
        .rows[0]!.xid;
    });
    assert.equal(assigned, null);
    await assertCountersMatch(db);
  });

  it('count the students active in any window as their last activity moves between hours, and fold per hour', async () => {
    const { db } = database;
    // 400 students whose last activity is spread over the last 40 days, a few minutes apart, some never active.
    await sql`insert into users (nickname, first_name, last_active_at)
      select 'spread_' || i, 'Spread', case when i % 9 = 0 then null else now() - (i * 143 || ' minutes')::interval end
      from generate_series(1, 400) as i`.execute(db);
    await assertCountersMatch(db);
    // Moves: back to now (into the current hour), into the past, within the same hour (nothing to append), to none.
    await sql`update users set last_active_at = now() where nickname like 'spread_1%'`.execute(db);
    await sql`update users set last_active_at = last_active_at - interval '3 days' where nickname like 'spread_2%'`.execute(
      db,
    );
    const before = await hourRows(db);
    await sql`update users set last_active_at = date_bin('1 hour', last_active_at, timestamptz '2000-01-01 00:00:00+00') + interval '1 minute'
      where nickname like 'spread_3%' and last_active_at is not null`.execute(db);
    await sql`update users set xp = xp + 1 where nickname like 'spread_%'`.execute(db);
    assert.equal(await hourRows(db), before, 'moves within an hour, and updates of other columns, append nothing');
    await sql`update users set last_active_at = null where nickname like 'spread_4%'`.execute(db);
    await db.deleteFrom('users').where('nickname', 'like', 'spread_5%').execute();
    await assertCountersMatch(db);

    // Each statement that moves a student to another hour appends rows; past the threshold a read folds them.
    const surplus = async () =>
      Number(
        (await sql<{ n: number }>`select count(*) - count(distinct hour) as n from activity_hour_deltas`.execute(db))
          .rows[0]!.n,
      );
    for (let i = 0; (await surplus()) <= FOLD_ABOVE; i++) {
      await sql`update users set last_active_at = now() - (${i % 48} || ' hours')::interval where nickname = ${`spread_${(i % 40) + 60}`}`.execute(
        db,
      );
    }
    const piled = await hourRows(db);
    await assertCountersMatch(db);
    const folded = await hourRows(db);
    assert.ok(folded < piled, `folded ${piled} rows into ${folded}`);
    const distinctHours = Number(
      (await sql<{ n: number }>`select count(distinct hour) as n from activity_hour_deltas`.execute(db)).rows[0]!.n,
    );
    assert.equal(folded, distinctHours, 'one row per hour after a fold');
    await assertCountersMatch(db);
  });

  it('run no trigger function for an update of users that moves nobody to another hour', async () => {
    const { db } = database;
    await addStudent(db, 'hourly');
    // The trigger functions this transaction called so far (track_functions counts PL/pgSQL calls per transaction).
    const calls = (trx: Db) =>
      sql<{ funcname: string; calls: number }>`select funcname, calls::int as calls from pg_stat_xact_user_functions
        where funcname like 'activity_hour%' order by funcname`
        .execute(trx)
        .then((result) => result.rows);
    const moved = (trx: Db, minutes: number) =>
      sql`update users set xp = xp + 1,
        last_active_at = date_bin('1 hour', now(), timestamptz '2000-01-01 00:00:00+00') + (${minutes} || ' minutes')::interval
        where nickname = 'hourly'`.execute(trx);
    const counted = await db.transaction().execute(async (trx) => {
      await sql`set local track_functions = 'pl'`.execute(trx);
      await moved(trx, 10);
      const called = await calls(trx);
      await moved(trx, 20); // the same hour: a review's xp and activity, as most updates are
      assert.deepEqual(await calls(trx), called, 'a move within the hour calls nothing');
      await moved(trx, -50); // the hour before
      return { called, after: await calls(trx) };
    });
    assert.notDeepEqual(counted.after, counted.called, 'a move to another hour appends its deltas');
    await assertCountersMatch(db);
  });

  it('equal count(*) after twenty connections wrote and read at once (PostgreSQL)', async function () {
    if (!database.url) this.skip(); // one embedded database has one connection: no concurrency to test
    this.timeout(120_000);
    // Twenty connections: more than connect()'s pool opens. Its clients may still be closing when the database is
    // dropped after the test, which terminates them: like connect(), listen, or the 'error' event ends the process.
    const pool = new pg.Pool({ connectionString: database.url, max: 20 });
    // pg-pool also re-emits an idle client's error on the pool itself, which throws without a listener there.
    pool.on('connect', (client) => client.on('error', () => {}));
    pool.on('error', () => {});
    const shared = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    try {
      await Promise.all(
        Array.from({ length: 20 }, async (_, worker) => {
          for (let round = 0; round < 15; round++) {
            const name = `w${worker}_${round}`;
            const id = await addStudent(shared, name);
            if (round % 3 === 0) await shared.deleteFrom('users').where('id', '=', id).execute();
            if (round % 4 === 1) await shared.deleteFrom('flashcard_decks').where('user_id', '=', id).execute();
            if (round % 4 === 2)
              await sql`update users set last_active_at = now() - (${worker * 7 + round} || ' hours')::interval where id = ${id}`.execute(
                shared,
              );
            if (round % 5 === 2) {
              // Half the work of a transaction that then fails: none of it may count.
              await shared
                .transaction()
                .execute(async (trx) => {
                  await addStudent(trx, `${name}_rolled_back`);
                  await trx.deleteFrom('users').where('id', '=', id).execute();
                  throw new Error('roll back');
                })
                .catch((error: Error) => assert.equal(error.message, 'roll back'));
            }
            // Readers fold while writers append.
            if (round % 2 === 0) await getServiceStats(shared, LONG_AGO);
          }
        }),
      );
      await assertCountersMatch(database.db);
      const survivors = await database.db
        .selectFrom('users')
        .select(database.db.fn.countAll<number>().as('n'))
        .where('nickname', 'like', 'w%')
        .executeTakeFirstOrThrow();
      assert.equal(Number(survivors.n), 20 * 10, 'five of fifteen deleted, none by the rolled-back transactions');
    } finally {
      await shared.destroy();
    }
  });
});
