// Named prepared statements (db/prepared-statements.ts), on both engines: the same rows as an unnamed statement, a
// statement prepared once per connection, which outlives a migration that changes a column's type, and one marked
// `plan: 'generic'` run with its generic plan where PostgreSQL would plan it again on every run.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { connect, embeddedDatabaseOf } from '../../db/connect.ts';
import { isDatabaseUnavailable } from '../../db/errors.ts';
import { executePrepared } from '../../db/prepared-statements.ts';
import { nextNotification } from '../support/next-notification.ts';
import { rolledBack } from '../support/query-fixture.ts';
import { testDatabase } from '../support/shared-database.ts';

describe('prepared statements', () => {
  const table = `prepared_statement_test_${randomBytes(4).toString('hex')}`;
  // A table of this test's own, outside the schema's types.
  const db = () => testDatabase().db as unknown as Kysely<Record<string, { id: number; value: number | string }>>;
  const byValue = (value: number) =>
    db().selectFrom(table).select(['id', 'value']).where('value', '>=', value).orderBy('id');

  // PGlite's own on PGlite (Kysely takes turns on its one connection by itself), a Kysely one on PostgreSQL.
  const transaction = async (body: (exec: (text: string) => Promise<unknown>) => Promise<void>) => {
    const pglite = embeddedDatabaseOf(testDatabase().db);
    if (pglite) await pglite.transaction((tx) => body((text) => tx.exec(text)));
    else
      await db()
        .transaction()
        .execute((trx) => body((text) => sql.raw(text).execute(trx)));
  };

  before(async () => {
    await sql`create table ${sql.table(table)} (id int primary key, value int not null)`.execute(db());
    await sql`insert into ${sql.table(table)} values (1, 10), (2, 20), (3, 30)`.execute(db());
  });
  after(() => sql`drop table ${sql.table(table)}`.execute(db()));

  it('answers what the unnamed statement answers, with each execution its own values', async () => {
    assert.deepEqual(await executePrepared(db(), byValue(20)), await byValue(20).execute());
    assert.deepEqual(await executePrepared(db(), byValue(30)), [{ id: 3, value: 30 }]);
    assert.deepEqual(await executePrepared(db(), byValue(40)), []);
  });

  it('fails as the unnamed statement does, and runs again after the failure', async () => {
    const failing = () =>
      db()
        .selectFrom(table)
        .select(sql<number>`1 / value`.as('share'))
        .where('value', '>=', 0);
    await sql`insert into ${sql.table(table)} values (4, 0)`.execute(db());
    try {
      await assert.rejects(executePrepared(db(), failing()), { code: '22012' }); // division by zero
    } finally {
      await sql`delete from ${sql.table(table)} where id = 4`.execute(db());
    }
    assert.equal((await executePrepared(db(), failing())).length, 3);
  });

  it('never runs inside an open transaction of another caller (one PGlite session serves both)', async () => {
    let read: Promise<unknown[]> | undefined;
    await transaction(async (exec) => {
      await exec(`insert into ${table} values (5, 50)`);
      read = executePrepared(db(), byValue(50));
      await new Promise((resolve) => setTimeout(resolve, 50));
      await exec(`delete from ${table} where id = 5`);
    });
    assert.deepEqual(await read, []);
  });

  it('reads every type as the unnamed statement does', async () => {
    // Several data rows, NULLs, text of one to four bytes a character, and the types the service reads.
    const everything = (at: number) =>
      sql<Record<string, unknown>>`
        select n, ${`café ☕ 𝄞 ${at}`}::text as text, null::text as nothing, (n * 10000000000)::int8 as big,
          (n * 1.5)::numeric as decimal, n % 2 = 0 as even, date '2026-02-28' + n as day,
          timestamptz '2026-11-27 10:00:00.123456+00' + n * interval '1 hour' as at,
          jsonb_build_object('n', n, 'text', 'ü') as json, array[n, n + 1] as numbers, array['a', null, 'b'] as words,
          gen_random_uuid() is not null as has_uuid
        from generate_series(1, 3) as n`;
    const prepared = await executePrepared(db(), everything(1));
    assert.equal(prepared.length, 3);
    assert.deepEqual(prepared, (await everything(1).execute(db())).rows);
    assert.equal(prepared[0]!.text, 'café ☕ 𝄞 1');
    assert.equal(prepared[1]!.big, 20000000000);
    assert.equal((prepared[2]!.at as Date).toISOString(), '2026-11-27T13:00:00.123Z');
  });

  it('reads a text that begins with a byte order mark whole', async () => {
    const rows = await executePrepared(db(), sql<{ text: string }>`select ${'\uFEFFmarked'}::text as text`);
    assert.equal(rows[0]!.text, '\uFEFFmarked');
  });

  it('hands on a NOTIFY of a statement outside a transaction to the listeners of its channel', async () => {
    const channel = `prepared_notify_${randomBytes(4).toString('hex')}`;
    await nextNotification(channel, 'missed');
    const arrived = nextNotification(channel, 'message');
    await executePrepared(db(), sql`select pg_notify(${channel}, 'sent by a named statement')`);
    assert.equal(await arrived, 'sent by a named statement');
  });

  it("hands on a NOTIFY of a named statement to PGlite's listeners of every channel, and stops when told", async function () {
    const pglite = embeddedDatabaseOf(testDatabase().db);
    if (!pglite) this.skip(); // PGlite's own listeners; on PostgreSQL the listening connection is another session
    const channel = `prepared_every_${randomBytes(4).toString('hex')}`;
    const heard: string[] = [];
    const own = (payload: string) => heard.push(`own ${payload}`);
    const every = (on: string, payload: string) => on === channel && heard.push(`every ${payload}`);
    const unlisten = await pglite!.listen(channel, own);
    const off = pglite!.onNotification(every);
    await executePrepared(db(), sql`select pg_notify(${channel}, 'one')`);
    await new Promise((resolve) => setImmediate(resolve));
    await unlisten();
    off();
    await executePrepared(db(), sql`select pg_notify(${channel}, 'two')`);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(heard.sort(), ['every one', 'own one']);
  });

  it('runs again outside transactions after a column under it changed type, on every connection', async () => {
    const all = () => db().selectFrom(table).select(['id', 'value']).orderBy('id');
    const tenAtOnce = () => Promise.all(Array.from({ length: 10 }, () => executePrepared(db(), all())));
    for (const rows of await tenAtOnce()) assert.deepEqual(rows.at(-1), { id: 3, value: 30 });
    await sql`alter table ${sql.table(table)} alter column value type text`.execute(db());
    try {
      for (const rows of await tenAtOnce()) assert.deepEqual(rows.at(-1), { id: 3, value: '30' });
    } finally {
      await sql`alter table ${sql.table(table)} alter column value type int using value::int`.execute(db());
    }
    for (const rows of await tenAtOnce()) assert.deepEqual(rows.at(-1), { id: 3, value: 30 });
  });

  it('is bounded by the statement timeout and the pool, and never lends a terminated connection again', async function () {
    const url = testDatabase().url;
    if (!url) this.skip(); // pg only: PGlite has no pool and no statement_timeout
    const failureOf = (promise: Promise<unknown>) =>
      promise.then(
        () => new Error('no failure'),
        (error: unknown) => error,
      );
    const slow = connect({ databaseUrl: url! }, { timeouts: { connectMs: 5_000, statementMs: 200 } });
    const reported: unknown[] = [];
    const small = connect(
      { databaseUrl: url! },
      { timeouts: { connectMs: 300, statementMs: 5_000 }, onConnectionError: (error) => reported.push(error) },
    );
    try {
      const timedOut = await failureOf(executePrepared(slow, sql`select pg_sleep(2)`));
      assert.equal((timedOut as { code?: string }).code, '57014');
      assert.equal(isDatabaseUnavailable(timedOut), true);
      // Ten connections busy (the pool's size): the eleventh statement waits for one no longer than connectMs.
      const busy = Array.from({ length: 10 }, () => executePrepared(small, sql`select pg_sleep(1)`));
      const exhausted = await failureOf(executePrepared(small, sql`select 1 as one`));
      await Promise.all(busy);
      assert.equal(isDatabaseUnavailable(exhausted), true, String(exhausted));

      // The pool lends its most recently returned connection: the sleep runs on the backend just read, terminated.
      const [{ pid }] = (await executePrepared(small, sql<{ pid: number }>`select pg_backend_pid() as pid`)) as [
        { pid: number },
      ];
      const [terminated] = await Promise.all([
        failureOf(executePrepared(small, sql`select pg_sleep(1), pg_backend_pid()`)),
        sql`select pg_terminate_backend(${pid})`.execute(testDatabase().db),
      ]);
      assert.equal(isDatabaseUnavailable(terminated), true, String(terminated));
      assert.deepEqual(reported, [{ code: '57P01', message: 'terminating connection due to administrator command' }]);
      // The terminated connection is not lent again: every statement after it runs.
      for (let i = 0; i < 12; i++) assert.deepEqual(await executePrepared(small, sql`select 1 as one`), [{ one: 1 }]);
    } finally {
      await Promise.all([slow.destroy(), small.destroy()]);
    }
  });

  it('is prepared once per connection, by name', async () => {
    await db()
      .connection()
      .execute(async (connection) => {
        await executePrepared(connection, byValue(10));
        await executePrepared(connection, byValue(20));
        const text = byValue(10).compile().sql;
        const { rows } = await sql<{
          name: string;
        }>`select name from pg_prepared_statements where statement = ${text}`.execute(connection);
        assert.equal(rows.length, 1);
        assert.match(rows[0]!.name, /^prepared_\d+$/);
      });
  });

  it('runs by name inside a transaction too, seeing its writes, and rolls back with it', async () => {
    const insert = (trx: Kysely<Record<string, { id: number; value: number | string }>>, id: number) =>
      trx
        .insertInto(table)
        .values({ id, value: id * 10 })
        .returning(['id', 'value']);
    await rolledBack(testDatabase().db, async (trx) => {
      const own = trx as unknown as Kysely<Record<string, { id: number; value: number | string }>>;
      assert.deepEqual(await executePrepared(own, insert(own, 6)), [{ id: 6, value: 60 }]);
      const reads = own.selectFrom(table).select(['id', 'value']).where('value', '>=', 60).orderBy('id');
      assert.deepEqual(await executePrepared(own, reads), [{ id: 6, value: 60 }]);
      const texts = [insert(own, 6).compile().sql, reads.compile().sql];
      const { rows } = await sql<{
        name: string;
      }>`select name from pg_prepared_statements where statement = any(${texts})`.execute(own);
      assert.equal(rows.length, 2);
      assert.ok(rows.every((row) => /^prepared_\d+$/.test(row.name)));
    });
    assert.deepEqual(await executePrepared(db(), byValue(60)), []);
  });

  it('runs again after a column under it changed type (a migration), instead of failing on that connection', async () => {
    await db()
      .connection()
      .execute(async (connection) => {
        const all = () => connection.selectFrom(table).select(['id', 'value']).orderBy('id');
        assert.deepEqual((await executePrepared(connection, all())).at(-1), { id: 3, value: 30 });
        await sql`alter table ${sql.table(table)} alter column value type text`.execute(connection);
        assert.deepEqual((await executePrepared(connection, all())).at(-1), { id: 3, value: '30' });
        // Inside a transaction the error aborts it, so the first use there fails; the statement is prepared again at
        // its next use, in a transaction too.
        await sql`alter table ${sql.table(table)} alter column value type int using value::int`.execute(connection);
        const inTransaction = () => connection.transaction().execute((trx) => executePrepared(trx, all()));
        await assert.rejects(inTransaction(), { message: 'cached plan must not change result type' });
        assert.deepEqual((await inTransaction()).at(-1), { id: 3, value: 30 });
      });
  });

  describe("plan: 'generic'", () => {
    // One owner holds 9,000 rows and 100 others 10 each: with these statistics the generic plan's estimate for an
    // owner is an average one's (~99 rows), a custom plan's for a small owner 10, so PostgreSQL plans the statement
    // again for every run (a large account among few students, as the daily loop met it).
    const skewed = `prepared_statement_skew_${randomBytes(4).toString('hex')}`;
    type Skewed = Kysely<Record<string, { id: number; owner: number; value: number }>>;
    const of = (connection: Kysely<any>) => connection as unknown as Skewed;
    const byOwner = (connection: Kysely<any>, owner: number, column: 'id' | 'value') =>
      of(connection).selectFrom(skewed).select(['id', column]).where('owner', '=', owner).orderBy('id');
    const plans = async (connection: Kysely<any>, query: { compile(): { sql: string } }) => {
      const { rows } = await sql<{ generic_plans: number; custom_plans: number }>`
        select generic_plans::int, custom_plans::int from pg_prepared_statements
        where statement = ${query.compile().sql}`.execute(connection);
      return rows[0];
    };
    const planCacheMode = async (connection: Kysely<any>) =>
      (await sql<{ plan_cache_mode: string }>`show plan_cache_mode`.execute(connection)).rows[0]!.plan_cache_mode;

    before(async () => {
      await sql`create table ${sql.table(skewed)} (id int primary key, owner int not null, value int not null)`.execute(
        db(),
      );
      await sql`create index on ${sql.table(skewed)} (owner)`.execute(db());
      await sql`insert into ${sql.table(skewed)}
        select n, case when n <= 9000 then 0 else n % 100 + 1 end, n from generate_series(1, 10000) n`.execute(db());
      await sql`analyze ${sql.table(skewed)}`.execute(db());
    });
    after(() => sql`drop table ${sql.table(skewed)}`.execute(db()));

    it('runs its generic plan where PostgreSQL plans the unmarked statement for every run, with the same rows', async () => {
      await db()
        .connection()
        .execute(async (connection) => {
          for (let run = 0; run < 8; run++) await executePrepared(connection, byOwner(connection, 1, 'id'));
          assert.deepEqual(await plans(connection, byOwner(connection, 1, 'id')), {
            generic_plans: 0,
            custom_plans: 8,
          });

          // Another text than the statement's (one text is one statement, named or not).
          const { rows: expected } = await sql`
            select id, value from ${sql.table(skewed)} where owner = 1 order by id`.execute(connection);
          for (let run = 0; run < 8; run++) {
            const rows = await executePrepared(connection, byOwner(connection, 1, 'value'), { plan: 'generic' });
            assert.deepEqual(rows, expected);
          }
          assert.deepEqual(await plans(connection, byOwner(connection, 1, 'value')), {
            generic_plans: 8,
            custom_plans: 0,
          });
          assert.equal(await planCacheMode(connection), 'auto');
        });
    });

    it('leaves plan_cache_mode as it was after a failure, and inside a transaction', async () => {
      const failing = (connection: Kysely<any>) =>
        of(connection)
          .selectFrom(skewed)
          .select(sql<number>`1 / (value - 10000)`.as('share'))
          .where('owner', '=', 1);
      await db()
        .connection()
        .execute(async (connection) => {
          await assert.rejects(executePrepared(connection, failing(connection), { plan: 'generic' }), {
            code: '22012',
          });
          assert.equal(await planCacheMode(connection), 'auto');
          await connection.transaction().execute(async (trx) => {
            const rows = await executePrepared(trx, byOwner(trx, 2, 'value'), { plan: 'generic' });
            assert.equal(rows.length, 10);
            assert.equal(await planCacheMode(trx), 'auto');
          });
        });
    });
  });
});
