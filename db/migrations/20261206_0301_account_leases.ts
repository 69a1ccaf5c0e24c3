// Frozen in time: a migration never imports application code, so it runs the same forever.
// One table for every per-account resource held over time (services/leases/): the open streams' rows become its
// first leases. A row is counted against its account's bound for its `kind` until it is deleted or `expires_at`
// passes (its process died); `grp` names what it holds within the kind (a stream's room, an AI reply's
// conversation), which a bound per group counts. The streams open during the upgrade keep their places: their rows
// move here (kind `stream`, their old kind as the group), so that a room's presences still find their stream's row.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table open_streams rename to account_leases`.execute(db);
  await sql`alter table account_leases rename column opened_at to taken_at`.execute(db);
  await db.schema.alterTable('account_leases').addColumn('grp', 'text').execute();
  await sql`update account_leases set grp = kind, kind = 'stream'`.execute(db);
  await sql`alter index open_streams_pkey rename to account_leases_pkey`.execute(db);
  await sql`alter index open_streams_grant rename to account_leases_grant`.execute(db);
  await sql`alter index open_streams_expires rename to account_leases_expires`.execute(db);
  await db.schema.dropIndex('open_streams_user').execute();
  await db.schema.createIndex('account_leases_user_kind').on('account_leases').columns(['user_id', 'kind']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('account_leases_user_kind').execute();
  await sql`delete from account_leases where kind <> 'stream'`.execute(db);
  await sql`update account_leases set kind = grp`.execute(db);
  await db.schema.alterTable('account_leases').dropColumn('grp').execute();
  await sql`alter table account_leases rename column taken_at to opened_at`.execute(db);
  await sql`alter index account_leases_pkey rename to open_streams_pkey`.execute(db);
  await sql`alter index account_leases_grant rename to open_streams_grant`.execute(db);
  await sql`alter index account_leases_expires rename to open_streams_expires`.execute(db);
  await sql`alter table account_leases rename to open_streams`.execute(db);
  await db.schema.createIndex('open_streams_user').on('open_streams').column('user_id').execute();
}
