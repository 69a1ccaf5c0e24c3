// Frozen in time: a migration never imports application code, so it runs the same forever.
// The delivering processes live on this database, each with the delivery settings it runs with (services/webhooks/
// delivery-settings.ts): a process whose settings differ from the live ones' refuses to start, since each process
// takes any job of the one delivery queue. A row is renewed by its process while it lives, deleted by its stop, and
// ignored once `live_until` has passed (a process killed with kill -9).
import { type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('webhook_delivery_processes')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('settings', 'jsonb', (c) => c.notNull())
    .addColumn('started_at', 'timestamptz', (c) => c.notNull())
    .addColumn('live_until', 'timestamptz', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('webhook_delivery_processes').execute();
}
