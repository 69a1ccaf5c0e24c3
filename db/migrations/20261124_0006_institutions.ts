// Frozen in time: a migration never imports application code, so it runs the same forever.
// Institutions (issue 12 item 4) are OAuth clients of their own kind: confidential clients that may also exchange
// their credential for a short-lived token of one consenting student (RFC 8693). `kind` tells them from apps;
// `disabled_at` ends a client for good (an operator's `institutions revoke`): a disabled client is unknown to the
// authorization server from then on.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('oauth_clients')
    .addColumn('kind', 'text', (c) =>
      c
        .notNull()
        .defaultTo('app')
        .check(sql`kind in ('app', 'institution')`),
    )
    .addColumn('disabled_at', 'timestamptz')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('oauth_clients').dropColumn('kind').dropColumn('disabled_at').execute();
}
