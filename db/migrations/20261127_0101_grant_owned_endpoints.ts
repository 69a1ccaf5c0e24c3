// Frozen in time: a migration never imports application code, so it runs the same forever.
// What a grant owns ends with it (issue 23, "Revocation is total"). A student's webhook endpoint registered through
// an app's or an institution's credential records that grant (`grant_id`, null for the student's own endpoints) and
// is deleted when the grant is revoked, as the personal keys minted through a grant already record theirs. The
// revoking transaction finds a grant's codes, keys and endpoints by these indexes.
//
// `oauth_grants.authenticated_at` is when the student typed the password for the grant (the sign-in and consent
// page); null for a grant no password stands behind (client credentials). The 5-minute re-authentication window is
// measured from it. Grants with an authorization code were made at that moment, so they take their creation time.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('webhook_endpoints')
    .addColumn('grant_id', 'uuid', (c) => c.references('oauth_grants.id').onDelete('cascade'))
    .execute();
  await db.schema
    .createIndex('webhook_endpoints_grant')
    .on('webhook_endpoints')
    .column('grant_id')
    .where(sql.ref('grant_id'), 'is not', null)
    .execute();
  await db.schema
    .createIndex('api_keys_grant')
    .on('api_keys')
    .column('grant_id')
    .where(sql.ref('grant_id'), 'is not', null)
    .execute();
  await db.schema
    .createIndex('oauth_authorization_codes_grant')
    .on('oauth_authorization_codes')
    .column('grant_id')
    .execute();

  await db.schema.alterTable('oauth_grants').addColumn('authenticated_at', 'timestamptz').execute();
  await sql`update oauth_grants as g set authenticated_at = g.created_at
    where exists (select 1 from oauth_authorization_codes as c where c.grant_id = g.id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('oauth_grants').dropColumn('authenticated_at').execute();
  for (const index of ['oauth_authorization_codes_grant', 'api_keys_grant', 'webhook_endpoints_grant'])
    await db.schema.dropIndex(index).execute();
  await db.schema.alterTable('webhook_endpoints').dropColumn('grant_id').execute();
}
