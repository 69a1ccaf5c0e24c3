// Frozen in time: a migration never imports application code, so it runs the same forever.
// Webhook attempts are jobs of the job engine (pg-boss) from now on: workers no longer look for due rows in
// webhook_deliveries, so the partial index that served that look-up goes.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_due').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('webhook_deliveries_due')
    .on('webhook_deliveries')
    .column('next_attempt_at')
    .where(sql.ref('status'), '=', 'pending')
    .execute();
}
