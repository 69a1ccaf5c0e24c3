// Frozen in time: a migration never imports application code, so it runs the same forever.
// Avatars are https URLs only: the profile update used to accept any URI (`javascript:`, `file:`), which partner
// v1 then served in public profiles. Stored values of another scheme are cleared (the student sets a new one),
// and a check keeps any path around the spec (seeds, the CLI, a bug) from storing one again.
import { sql, type Kysely } from 'kysely';

/** The same rule as the spec's ProfileUpdate.avatar_url pattern: https and a host. */
const HTTPS_URL = sql`'^https://[^/?#]+'`;

export async function up(db: Kysely<any>): Promise<void> {
  await sql`update users set avatar_url = null where avatar_url !~ ${HTTPS_URL}`.execute(db);
  await sql`alter table users add constraint users_avatar_url_https check (avatar_url ~ ${HTTPS_URL})`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('users').dropConstraint('users_avatar_url_https').execute();
}
