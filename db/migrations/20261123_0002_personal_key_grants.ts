// Frozen in time: a migration never imports application code, so it runs the same forever.
// A personal key created with an OAuth access token (an app holding `keys:manage`) belongs to that app's grant:
// revoking the grant (sign-out, revocation, a replayed refresh token) ends the keys minted through it too.
// Keys the student creates with a key inherit that key's grant; keys made outside OAuth have none.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('api_keys')
    .addColumn('grant_id', 'uuid', (c) => c.references('oauth_grants.id').onDelete('cascade'))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('api_keys').dropColumn('grant_id').execute();
}
