// Frozen in time: a migration never imports application code, so it runs the same forever.
// One account export at a time per student, in every process: a download holds a lease row while it runs, renewed
// while it lasts and deleted when it ends. A process that dies leaves its lease behind only until `expires_at`.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('export_leases')
    .addColumn('user_id', 'uuid', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('holder', 'uuid', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('taken_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('export_leases').execute();
}
