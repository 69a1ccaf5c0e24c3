// Frozen in time: a migration never imports application code, so it runs the same forever.
// Accounts (sign-in, plan, time zone), personal API keys, and the OAuth 2.0 authorization server's records.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('users')
    .addColumn('email', 'text')
    .addColumn('password_hash', 'text')
    .addColumn('time_zone', 'text', (c) => c.notNull().defaultTo('UTC'))
    .addColumn('country_code', 'char(2)', (c) => c.check(sql`country_code = lower(country_code)`))
    .addColumn('plan', 'text', (c) =>
      c
        .notNull()
        .defaultTo('free')
        .check(sql`plan in ('free', 'plus', 'contract')`),
    )
    // Limits of a contractual account, agreed per contract; null for the standard plans.
    .addColumn('contract_per_minute', 'integer', (c) => c.check(sql`contract_per_minute > 0`))
    .addColumn('contract_per_day', 'integer', (c) => c.check(sql`contract_per_day > 0`))
    .addColumn('contract_ai_per_hour', 'integer', (c) => c.check(sql`contract_ai_per_hour > 0`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex('users_email_lower_unique')
    .on('users')
    .unique()
    .expression(sql`lower(email)`)
    .execute();
  await sql`alter table users add constraint users_contract_limits_check check (
    (plan = 'contract') = (contract_per_minute is not null and contract_per_day is not null and contract_ai_per_hour is not null))`.execute(
    db,
  );

  // Personal keys belong to a user and carry scopes; partner keys (user_id null) carry their own limits.
  await db.schema
    .alterTable('api_keys')
    .addColumn('user_id', 'uuid', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('scopes', sql`text[]`)
    .execute();
  await sql`alter table api_keys alter column per_minute drop not null, alter column per_day drop not null`.execute(db);
  await sql`alter table api_keys add constraint api_keys_kind_check check (
    (user_id is null) = (per_minute is not null and per_day is not null and scopes is null))`.execute(db);
  await db.schema.createIndex('api_keys_user_idx').on('api_keys').columns(['user_id', 'created_at']).execute();

  await db.schema
    .createTable('oauth_clients')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    // Null for public clients (apps that cannot keep a secret); they must use PKCE.
    .addColumn('secret_hash', 'text')
    .addColumn('redirect_uris', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('grants', sql`text[]`, (c) => c.notNull())
    .addColumn('scopes', sql`text[]`, (c) => c.notNull())
    // The account a client-credentials client acts for.
    .addColumn('owner_user_id', 'uuid', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  // One grant per authorization (or client-credentials issue); every token descends from one, and revoking the
  // grant invalidates its refresh tokens and its access tokens at once.
  await db.schema
    .createTable('oauth_grants')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('client_id', 'text', (c) => c.notNull().references('oauth_clients.id').onDelete('cascade'))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('scopes', sql`text[]`, (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('revoked_at', 'timestamptz')
    .addColumn('revoked_reason', 'text')
    .execute();

  await db.schema
    .createTable('oauth_authorization_codes')
    .addColumn('code_hash', 'text', (c) => c.primaryKey())
    .addColumn('grant_id', 'uuid', (c) => c.notNull().references('oauth_grants.id').onDelete('cascade'))
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('code_challenge', 'text', (c) => c.notNull())
    .addColumn('code_challenge_method', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('used_at', 'timestamptz')
    .execute();

  await db.schema
    .createTable('oauth_refresh_tokens')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('grant_id', 'uuid', (c) => c.notNull().references('oauth_grants.id').onDelete('cascade'))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    // Set when the token is exchanged; a second exchange is a replay and revokes the grant.
    .addColumn('rotated_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('oauth_refresh_tokens_grant_idx').on('oauth_refresh_tokens').column('grant_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['oauth_refresh_tokens', 'oauth_authorization_codes', 'oauth_grants', 'oauth_clients']) {
    await db.schema.dropTable(table).execute();
  }
  await sql`delete from api_keys where user_id is not null`.execute(db);
  await db.schema.alterTable('api_keys').dropConstraint('api_keys_kind_check').execute();
  await db.schema.alterTable('api_keys').dropColumn('user_id').dropColumn('scopes').execute();
  await sql`alter table api_keys alter column per_minute set not null, alter column per_day set not null`.execute(db);
  await db.schema.alterTable('users').dropConstraint('users_contract_limits_check').execute();
  await db.schema.dropIndex('users_email_lower_unique').execute();
  for (const column of [
    'email',
    'password_hash',
    'time_zone',
    'country_code',
    'plan',
    'contract_per_minute',
    'contract_per_day',
    'contract_ai_per_hour',
    'updated_at',
  ]) {
    await db.schema.alterTable('users').dropColumn(column).execute();
  }
}
