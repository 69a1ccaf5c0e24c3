// Frozen in time: a migration never imports application code, so it runs the same forever.
// Account lifecycle: a password change ends the refresh tokens of the student's other sign-ins without ending
// their grants (the personal keys minted through them are kept), so a refresh token gets a revocation time of its
// own. Deleting an account keeps its payments for accounting, anonymised: their link to the student becomes null.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('oauth_refresh_tokens').addColumn('revoked_at', 'timestamptz').execute();

  await sql`alter table payments alter column user_id drop not null`.execute(db);
  await sql`alter table payments drop constraint payments_user_id_fkey`.execute(db);
  await sql`alter table payments add constraint payments_user_id_fkey foreign key (user_id) references users(id) on delete set null`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`delete from payments where user_id is null`.execute(db);
  await sql`alter table payments drop constraint payments_user_id_fkey`.execute(db);
  await sql`alter table payments add constraint payments_user_id_fkey foreign key (user_id) references users(id) on delete cascade`.execute(
    db,
  );
  await sql`alter table payments alter column user_id set not null`.execute(db);
  await db.schema.alterTable('oauth_refresh_tokens').dropColumn('revoked_at').execute();
}
