// Frozen in time: a migration never imports application code, so it runs the same forever.
// Counters behind /api/v1/stats, so that it stops counting whole tables (a million students took ~1 s).
// Each counted table gets statement-level AFTER INSERT / AFTER DELETE triggers that append ONE row to
// `stat_counter_deltas` per statement: (the table's name, the number of rows the statement added or removed, read
// from its transition table). Appending never touches a row another transaction could hold, so concurrent writers
// never wait on each other (a single counter row updated by +1 would serialize every insert of a table, and N sharded
// rows can still deadlock two transactions that write two counted tables in opposite orders). A rolled-back
// statement's delta rolls back with it. A bulk INSERT … SELECT of 20,000 rows adds one delta row, not 20,000.
// The reader sums the deltas per table and folds them into one row per table now and then (db/queries/stats.ts).
// TRUNCATE fires no delete trigger: its own trigger writes minus the table's running total (TRUNCATE holds the
// table exclusively, so nothing else moves that total meanwhile).
// The migration backfills each counter from count(*); creating the triggers locks each table against writes until
// this migration commits, so no row is counted twice or missed.
// `active_users_30d` is a moving window, not a counter: it stays a range over a new index on users.last_active_at.
import { sql, type Kysely } from 'kysely';

const COUNTED = ['users', 'universities', 'flashcard_decks', 'ai_messages', 'study_rooms'] as const;

export async function up(db: Kysely<any>): Promise<void> {
  // No key: rows are only appended and folded; nothing looks one up.
  await db.schema
    .createTable('stat_counter_deltas')
    .addColumn('counter', 'text', (c) => c.notNull())
    .addColumn('delta', 'bigint', (c) => c.notNull())
    .execute();
  await sql`
    create function stat_counter_delta() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' then
        insert into stat_counter_deltas (counter, delta) select tg_table_name, count(*) from added having count(*) > 0;
      elsif tg_op = 'DELETE' then
        insert into stat_counter_deltas (counter, delta) select tg_table_name, -count(*) from removed having count(*) > 0;
      else
        insert into stat_counter_deltas (counter, delta)
        select tg_table_name, -sum(delta) from stat_counter_deltas where counter = tg_table_name having sum(delta) <> 0;
      end if;
      return null;
    end $$`.execute(db);
  for (const table of COUNTED) {
    await sql`create trigger ${sql.id(`${table}_count_insert`)} after insert on ${sql.table(table)}
      referencing new table as added for each statement execute function stat_counter_delta()`.execute(db);
    await sql`create trigger ${sql.id(`${table}_count_delete`)} after delete on ${sql.table(table)}
      referencing old table as removed for each statement execute function stat_counter_delta()`.execute(db);
    await sql`create trigger ${sql.id(`${table}_count_truncate`)} after truncate on ${sql.table(table)}
      for each statement execute function stat_counter_delta()`.execute(db);
    await sql`insert into stat_counter_deltas (counter, delta) select ${table}, count(*) from ${sql.table(table)}`.execute(
      db,
    );
  }
  await db.schema.createIndex('users_last_active_idx').on('users').column('last_active_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('users_last_active_idx').execute();
  for (const table of COUNTED) {
    for (const event of ['insert', 'delete', 'truncate'])
      await sql`drop trigger ${sql.id(`${table}_count_${event}`)} on ${sql.table(table)}`.execute(db);
  }
  await sql`drop function stat_counter_delta()`.execute(db);
  await db.schema.dropTable('stat_counter_deltas').execute();
}
