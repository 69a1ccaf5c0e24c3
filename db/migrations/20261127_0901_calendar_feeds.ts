// Frozen in time: a migration never imports application code, so it runs the same forever.
// Calendar feeds: secret URLs that serve a student's calendar to calendar apps. The token in the URL is a credential,
// stored as its SHA-256 only (looked up by it), with a short public prefix to recognise it by. A feed created through
// an OAuth grant ends with it (grant_id); every feed goes with its account.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('calendar_feeds')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('grant_id', 'uuid', (c) => c.references('oauth_grants.id').onDelete('cascade'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_used_at', 'timestamptz')
    .addColumn('revoked_at', 'timestamptz')
    .execute();
  await db.schema
    .createIndex('calendar_feeds_by_user')
    .on('calendar_feeds')
    .columns(['user_id', 'created_at'])
    .execute();
  await db.schema
    .createIndex('calendar_feeds_by_grant')
    .on('calendar_feeds')
    .column('grant_id')
    .where(sql.ref('grant_id'), 'is not', null)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('calendar_feeds').execute();
}
