// Frozen in time: a migration never imports application code, so it runs the same forever.
// A delivering process, when it starts, gives a job to every pending delivery that has none (deliveries made before
// attempts became jobs, or whose job the engine gave up on while the database was down). This partial index keeps
// that look-up to the pending rows, however many delivered ones pile up.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('webhook_deliveries_pending')
    .on('webhook_deliveries')
    .column('id')
    .where(sql.ref('status'), '=', 'pending')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_pending').execute();
}
