// Frozen in time: a migration never imports application code, so it runs the same forever.
// PostgreSQL serializes the commits of every transaction that sends a NOTIFY, server-wide: PreCommit_Notify takes one
// exclusive lock and holds it through the commit's WAL flush, so that notifications queue in commit order. Nearly
// every student write notified (its outbox row, its xp, its stats delta), so the writes of all students queued on that
// lock, one flush at a time (docs/performance.md, "The write ceiling").
//
// A session that sets `study_companion.notify_after_commit = on` (the service's own pooled connections, db/connect.ts)
// now gets a notice instead, which the driver reads from the statement's answer at no cost of a round trip; the
// process sends the notification itself once the transaction has committed (db/notifications-after-commit.ts), in a
// transaction that writes nothing and so is not flushed while it holds the lock. Any other session (psql, a script, a
// process behind a transaction pooler, which passes no start-up setting) notifies at its commit as before. A notice is
// raised once per channel and transaction, as PostgreSQL collapses a transaction's identical notifications.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function notify_after_commit(channel text, payload text) returns void language plpgsql as $$
    begin
      if current_setting('study_companion.notify_after_commit', true) = 'on' then
        raise notice using message = 'study_companion.notify', detail = channel, hint = payload;
      else
        perform pg_notify(channel, payload);
      end if;
    end $$`.execute(db);
  await sql`
    create or replace function notify_channel() returns trigger language plpgsql as $$
    begin
      if current_setting('study_companion.notify_after_commit', true) = 'on' then
        -- Once per transaction and channel: a row-level trigger fires for every row an update touches.
        if current_setting('study_companion.noticed_' || tg_argv[0], true) is distinct from 'on' then
          perform set_config('study_companion.noticed_' || tg_argv[0], 'on', true);
          raise notice using message = 'study_companion.notify', detail = tg_argv[0], hint = '';
        end if;
      else
        perform pg_notify(tg_argv[0], '');
      end if;
      return null;
    end $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function notify_channel() returns trigger language plpgsql as $$
    begin
      perform pg_notify(tg_argv[0], '');
      return null;
    end $$`.execute(db);
  await sql`drop function notify_after_commit(text, text)`.execute(db);
}
