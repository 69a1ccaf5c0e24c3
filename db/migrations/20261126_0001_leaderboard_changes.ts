// Frozen in time: a migration never imports application code, so it runs the same forever. The partner leaderboards are
// kept in each process's memory (db/queries/leaderboards.ts) and dropped when a change could move them: these triggers
// send a NOTIFY on the `leaderboards` channel (db/notifications.ts) from every statement that adds or removes students,
// and from every update that changes what a board shows or orders by (xp, names, the last activity that hides names,
// the streak and what it lapses by, the university). NOTIFY is sent by the commit and collapsed to one per transaction,
// so a review that moves xp costs its transaction one notification; writers need not know that boards are kept, and a
// change written by hand (psql, a script) drops them too.
import { sql, type Kysely } from 'kysely';

const SHOWN_COLUMNS = [
  'xp',
  'nickname',
  'first_name',
  'last_active_at',
  'streak',
  'last_study_date',
  'time_zone',
  'university_id',
];

export async function up(db: Kysely<any>): Promise<void> {
  // A trigger function for any channel: the channel is the trigger's argument (what keeps another kept read model
  // current uses it too, e.g. 20261126_0002_stats_changes).
  await sql`
    create function notify_channel() returns trigger language plpgsql as $$
    begin
      perform pg_notify(tg_argv[0], '');
      return null;
    end $$`.execute(db);
  await sql`create trigger users_leaderboards_insert after insert on users
    for each statement execute function notify_channel('leaderboards')`.execute(db);
  // Row level, so that an update which sets these columns to what they were (a profile saved unchanged, a second review
  // on the same day) notifies nobody; the condition is evaluated without calling the function.
  const changed = sql.join(
    SHOWN_COLUMNS.map((column) => sql`old.${sql.id(column)} is distinct from new.${sql.id(column)}`),
    sql` or `,
  );
  await sql`create trigger users_leaderboards_update after update on users
    for each row when (${changed}) execute function notify_channel('leaderboards')`.execute(db);
  await sql`create trigger users_leaderboards_delete after delete on users
    for each statement execute function notify_channel('leaderboards')`.execute(db);
  await sql`create trigger users_leaderboards_truncate after truncate on users
    for each statement execute function notify_channel('leaderboards')`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const event of ['insert', 'update', 'delete', 'truncate'])
    await sql`drop trigger ${sql.id(`users_leaderboards_${event}`)} on users`.execute(db);
  await sql`drop function notify_channel()`.execute(db);
}
