// Frozen in time: a migration never imports application code, so it runs the same forever.
// One table for every per-account resource held over time (services/leases/): a row is counted against its
// account's bound for its `kind` until it is deleted or `expires_at` passes (its process died); `grp` names what it
// holds within the kind (a stream's room, an AI reply's conversation), which a bound per group counts. The credential
// that took it is kept (the grant an access token or key belongs to, the key) so that revoking it finds its leases;
// deleting the account, the grant or the key deletes them too.
//
// The live rows of open_streams are copied (kind `stream`, their old kind as the group), so that the streams open
// across the upgrade keep their places in the count. open_streams and export_leases stay for the previous release
// while both serve, and are dropped a release later; exports running during the upgrade are not copied (they may let
// one second export of a student start until they end).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('account_leases')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('grp', 'text')
    .addColumn('grant_id', 'uuid', (c) => c.references('oauth_grants.id').onDelete('cascade'))
    .addColumn('key_id', 'uuid', (c) => c.references('api_keys.id').onDelete('cascade'))
    .addColumn('taken_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('account_leases_user_kind').on('account_leases').columns(['user_id', 'kind']).execute();
  await db.schema
    .createIndex('account_leases_grant')
    .on('account_leases')
    .column('grant_id')
    .where(sql.ref('grant_id'), 'is not', null)
    .execute();
  await db.schema.createIndex('account_leases_expires').on('account_leases').column('expires_at').execute();
  await sql`
    insert into account_leases (id, user_id, kind, grp, grant_id, key_id, taken_at, expires_at)
    select id, user_id, 'stream', kind, grant_id, key_id, opened_at, expires_at from open_streams
    where expires_at > statement_timestamp()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('account_leases').execute();
}
