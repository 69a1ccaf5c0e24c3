// Frozen in time: a migration never imports application code, so it runs the same forever.
// The streams open now, one row per stream, so that the bound on an account's open streams holds across every
// process that serves it (services/streams/open-streams.ts). A row is a lease: the process holding the stream pushes
// `expires_at` forward while it is open, so the rows of a process that died without a word stop counting once their
// lease runs out. The credential that opened the stream is kept (the grant an access token or key belongs to, the
// key) so that revoking it finds its streams; deleting the account, the grant or the key deletes them too.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('open_streams')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('grant_id', 'uuid', (c) => c.references('oauth_grants.id').onDelete('cascade'))
    .addColumn('key_id', 'uuid', (c) => c.references('api_keys.id').onDelete('cascade'))
    .addColumn('opened_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('open_streams_user').on('open_streams').column('user_id').execute();
  await db.schema
    .createIndex('open_streams_grant')
    .on('open_streams')
    .column('grant_id')
    .where(sql.ref('grant_id'), 'is not', null)
    .execute();
  await db.schema.createIndex('open_streams_expires').on('open_streams').column('expires_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('open_streams').execute();
}
