// Frozen in time: a migration never imports application code, so it runs the same forever.
// The hour of each student's last activity (20261125_0401_activity_hours) followed every UPDATE of users with a
// statement-level trigger over the statement's transition tables. PostgreSQL captures the old and new versions of
// every row an update touches once any trigger asks for them, and that trigger's query then ran for every update of
// users, whatever it changed: a graded review's xp and streak, a task's close, a profile saved. Nearly all of them move
// no student to another hour, and wrote nothing.
//
// Now a row-level trigger whose WHEN compares the two hours: PostgreSQL evaluates the condition for each updated row
// without calling the function or keeping any version of the row, and only a student whose last activity crosses into
// another hour appends -1 to the old hour and +1 to the new (as many rows as students moved: a bulk move appends more
// rows than one per hour, which the reader's fold absorbs, db/queries/stats.ts). The sums per hour are the same as
// before; inserts, deletes and truncates keep their statement-level triggers.
import { sql, type Kysely } from 'kysely';

const HOUR_OF = (column: string) => sql`date_bin('1 hour', ${sql.raw(column)}, timestamptz '2000-01-01 00:00:00+00')`;

export async function up(db: Kysely<any>): Promise<void> {
  await sql`drop trigger users_activity_update on users`.execute(db);
  await sql`
    create function activity_hour_move() returns trigger language plpgsql as $$
    begin
      insert into activity_hour_deltas (hour, delta)
      select ${HOUR_OF('old.last_active_at')}, -1 where old.last_active_at is not null
      union all
      select ${HOUR_OF('new.last_active_at')}, 1 where new.last_active_at is not null;
      return null;
    end $$`.execute(db);
  await sql`create trigger users_activity_update after update of last_active_at on users
    for each row when (${HOUR_OF('old.last_active_at')} is distinct from ${HOUR_OF('new.last_active_at')})
    execute function activity_hour_move()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger users_activity_update on users`.execute(db);
  await sql`drop function activity_hour_move()`.execute(db);
  await sql`create trigger users_activity_update after update on users
    referencing old table as removed new table as added for each statement execute function activity_hour_delta()`.execute(
    db,
  );
}
