// Frozen in time: a migration never imports application code, so it runs the same forever.
// Webhook delivery starts at the commit of the change, not at the worker's next poll: every statement that adds rows
// to the outbox (`events`) sends a NOTIFY on the `webhook_work` channel (db/notifications.ts; the function is
// 20261126_0001's notify_channel), which wakes the delivery workers of every process (services/webhooks/worker.ts).
// NOTIFY is sent by the commit (never for a rolled-back change) and collapsed to one per transaction; a trigger costs
// the writer no round trip, and an event written by hand (psql, a script) wakes the workers too.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create trigger events_webhook_work after insert on events
    for each statement execute function notify_channel('webhook_work')`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger events_webhook_work on events`.execute(db);
}
