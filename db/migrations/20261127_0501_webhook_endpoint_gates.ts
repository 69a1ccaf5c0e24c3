// Frozen in time: a migration never imports application code, so it runs the same forever.
// Fair webhook delivery (services/webhooks/gate.ts): one row per endpoint that has been attempted, holding
//   - the lease of the one attempt in flight to it (the job that holds it, and until when: a process killed
//     mid-attempt leaves a lease that simply ends), which also counts towards its account's attempts in flight;
//   - its circuit breaker: the run of consecutive failed attempts, and until when attempts to it pause.
// `account` is the endpoint's owner ('user:<id>' or 'client:<id>'), so an account's attempts in flight are counted
// from this table alone. A second index finds an account's due deliveries when an attempt hands its place over.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('webhook_endpoint_gates')
    .addColumn('endpoint_id', 'uuid', (c) => c.primaryKey().references('webhook_endpoints.id').onDelete('cascade'))
    .addColumn('account', 'text', (c) => c.notNull())
    .addColumn('lease_job', 'text')
    .addColumn('lease_until', 'timestamptz')
    .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('open_until', 'timestamptz')
    .execute();
  await db.schema
    .createIndex('webhook_endpoint_gates_leased')
    .on('webhook_endpoint_gates')
    .columns(['account', 'lease_until'])
    .where(sql.ref('lease_until'), 'is not', null)
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_pending_by_endpoint')
    .on('webhook_deliveries')
    .columns(['endpoint_id', 'next_attempt_at'])
    .where(sql.ref('status'), '=', 'pending')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_pending_by_endpoint').execute();
  await db.schema.dropTable('webhook_endpoint_gates').execute();
}
