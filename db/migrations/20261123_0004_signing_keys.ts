// Frozen in time: a migration never imports application code, so it runs the same forever.
// The keys that sign OAuth access tokens, shared by every process of a deployment on PostgreSQL. The newest key
// without `retired_at` signs; retired keys still verify until the tokens they signed have expired. The private
// half is stored only encrypted (AES-256-GCM under SECRETS_KEY), bound to its kid.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('signing_keys')
    .addColumn('kid', 'text', (c) => c.primaryKey())
    .addColumn('private_key_sealed', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('retired_at', 'timestamptz')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('signing_keys').execute();
}
