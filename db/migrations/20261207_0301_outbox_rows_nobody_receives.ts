// Frozen in time: a migration never imports application code, so it runs the same forever.
// An outbox row that no webhook endpoint can receive (its student has no enabled endpoint of their own subscribed to
// its kind, and no live grant to an app with one) is now stored fanned out already (db/queries/events.ts). Until now every
// row was stored waiting, woke the relays of every process, and was then locked and marked by a fan-out pass: a second
// write of the row (not a HOT update, since the waiting rows' partial index names the column) and an entry in each of
// its five indexes, for an event that nobody was ever going to be sent.
//
// The wake-up follows the rows: the statement-level trigger becomes a row-level one whose WHEN passes by a row stored
// fanned out, so a write whose events nobody receives calls no trigger function, raises no notice and sends no
// notification after its commit. notify_channel still raises one notice per transaction and channel, however many rows.
//
// The write's check reads the student's grants by student: the index on oauth_grants (user_id) also serves the
// fan-out's join of events to grants and the cascade when a student is deleted.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index oauth_grants_user on oauth_grants (user_id)`.execute(db);
  await sql`drop trigger events_webhook_work on events`.execute(db);
  await sql`create trigger events_webhook_work after insert on events
    for each row when (new.fanned_out_at is null) execute function notify_channel('webhook_work')`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger events_webhook_work on events`.execute(db);
  await sql`create trigger events_webhook_work after insert on events
    for each statement execute function notify_channel('webhook_work')`.execute(db);
  await sql`drop index oauth_grants_user`.execute(db);
}
