// Frozen in time: a migration never imports application code, so it runs the same forever.
// `active_users_30d` of /api/v1/stats without reading the students: it was a range over users_last_active_idx,
// which on a million students read ~800 k index entries (~120 ms) per request. Now every student is counted in the
// hour (UTC) of their last activity: statement-level triggers on users append (hour, ±n) rows to
// `activity_hour_deltas` whenever a statement moves last_active_at out of one hour and into another, adds or removes
// students. Like the stats counters (20261124_0007), rows are only appended, never updated, so concurrent writers
// never wait on each other, and a rolled-back statement's rows roll back with it. The reader sums the whole hours of
// the window and counts the students of its first, partial hour on the index (db/queries/stats.ts), and folds the
// appended rows into one per hour now and then.
// The hour is `date_bin('1 hour', …, epoch)`, which depends on no session time zone (date_trunc on a timestamptz
// would cut hours in the session's zone, and a zone with a half-hour offset would cut them elsewhere).
// The migration backfills one row per hour from users; creating the triggers locks users against writes until this
// migration commits, so no student is counted twice or missed.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // No key: rows are appended and folded; the reader sums a range of hours.
  await db.schema
    .createTable('activity_hour_deltas')
    .addColumn('hour', 'timestamptz', (c) => c.notNull())
    .addColumn('delta', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('activity_hour_deltas_hour_idx').on('activity_hour_deltas').column('hour').execute();
  await sql`
    create function activity_hour_delta() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' then
        insert into activity_hour_deltas (hour, delta)
        select date_bin('1 hour', last_active_at, timestamptz '2000-01-01 00:00:00+00'), count(*)
        from added where last_active_at is not null group by 1;
      elsif tg_op = 'DELETE' then
        insert into activity_hour_deltas (hour, delta)
        select date_bin('1 hour', last_active_at, timestamptz '2000-01-01 00:00:00+00'), -count(*)
        from removed where last_active_at is not null group by 1;
      elsif tg_op = 'UPDATE' then
        -- Most updates of users (xp, a plan, a streak within the hour) move no student to another hour: nothing is written.
        insert into activity_hour_deltas (hour, delta)
        select hour, sum(delta) from (
          select date_bin('1 hour', last_active_at, timestamptz '2000-01-01 00:00:00+00') as hour, 1 as delta from added where last_active_at is not null
          union all
          select date_bin('1 hour', last_active_at, timestamptz '2000-01-01 00:00:00+00'), -1 from removed where last_active_at is not null
        ) as moves group by hour having sum(delta) <> 0;
      else
        insert into activity_hour_deltas (hour, delta)
        select hour, -sum(delta) from activity_hour_deltas group by hour having sum(delta) <> 0;
      end if;
      return null;
    end $$`.execute(db);
  await sql`create trigger users_activity_insert after insert on users
    referencing new table as added for each statement execute function activity_hour_delta()`.execute(db);
  await sql`create trigger users_activity_update after update on users
    referencing old table as removed new table as added for each statement execute function activity_hour_delta()`.execute(
    db,
  );
  await sql`create trigger users_activity_delete after delete on users
    referencing old table as removed for each statement execute function activity_hour_delta()`.execute(db);
  await sql`create trigger users_activity_truncate after truncate on users
    for each statement execute function activity_hour_delta()`.execute(db);
  await sql`insert into activity_hour_deltas (hour, delta)
    select date_bin('1 hour', last_active_at, timestamptz '2000-01-01 00:00:00+00'), count(*)
    from users where last_active_at is not null group by 1`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const event of ['insert', 'update', 'delete', 'truncate'])
    await sql`drop trigger ${sql.id(`users_activity_${event}`)} on users`.execute(db);
  await sql`drop function activity_hour_delta()`.execute(db);
  await db.schema.dropTable('activity_hour_deltas').execute();
}
