// Frozen in time: a migration never imports application code, so it runs the same forever.
// webhook_deliveries is the delivery queue: workers look for pending rows whose next_attempt_at has come. This
// partial index keeps that look-up to the pending rows, however many delivered ones pile up.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('webhook_deliveries_due')
    .on('webhook_deliveries')
    .column('next_attempt_at')
    .where(sql.ref('status'), '=', 'pending')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_due').execute();
}
