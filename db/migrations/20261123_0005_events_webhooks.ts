// Frozen in time: a migration never imports application code, so it runs the same forever.
// Events and their webhook deliveries. `events` is the outbox: a row is written in the same transaction as the
// change it reports, so no change is committed without its event and no event exists without its change. Delivery
// fans each event out to `webhook_deliveries` (one per endpoint, unique, so a retry never makes a second delivery)
// and records every try in `webhook_attempts`. An endpoint belongs to one student or to one OAuth client (an app).
// Secrets are stored only sealed (AES-256-GCM under SECRETS_KEY); during a rotation the previous one still signs.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('events')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('data', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    // Set once the event has been fanned out to the endpoints that wanted it.
    .addColumn('fanned_out_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('events_user_created').on('events').columns(['user_id', 'created_at']).execute();
  await db.schema
    .createIndex('events_not_fanned_out')
    .on('events')
    .column('created_at')
    .where(sql.ref('fanned_out_at'), 'is', null)
    .execute();

  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('client_id', 'text', (c) => c.references('oauth_clients.id').onDelete('cascade'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('event_types', sql`text[]`, (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(true))
    // Why a disabled endpoint is disabled: 'failing' when delivery gave up on it, null when its owner turned it off.
    .addColumn('disabled_reason', 'text')
    .addColumn('secret_sealed', 'text', (c) => c.notNull())
    .addColumn('previous_secret_sealed', 'text')
    .addColumn('previous_secret_expires_at', 'timestamptz')
    // The start of the current run of failed attempts; null after a success.
    .addColumn('failing_since', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('webhook_endpoints_one_owner', sql`(user_id is null) <> (client_id is null)`)
    .execute();
  await db.schema
    .createIndex('webhook_endpoints_user')
    .on('webhook_endpoints')
    .columns(['user_id', 'created_at'])
    .execute();
  // An app has one endpoint (the GitHub App model).
  await db.schema
    .createIndex('webhook_endpoints_client_unique')
    .on('webhook_endpoints')
    .column('client_id')
    .unique()
    .execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('event_id', 'uuid', (c) => c.notNull().references('events.id').onDelete('cascade'))
    .addColumn('endpoint_id', 'uuid', (c) => c.notNull().references('webhook_endpoints.id').onDelete('cascade'))
    .addColumn('status', 'text', (c) =>
      c
        .notNull()
        .defaultTo('pending')
        .check(sql`status in ('pending', 'succeeded', 'failed')`),
    )
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'timestamptz')
    .addColumn('last_attempt_at', 'timestamptz')
    .addColumn('succeeded_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('webhook_deliveries_event_endpoint_unique', ['event_id', 'endpoint_id'])
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_endpoint_created')
    .on('webhook_deliveries')
    .columns(['endpoint_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('webhook_attempts')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('delivery_id', 'uuid', (c) => c.notNull().references('webhook_deliveries.id').onDelete('cascade'))
    .addColumn('started_at', 'timestamptz', (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    // The receiver's status code; null when there was no response (timeout, refused, address not allowed).
    .addColumn('response_status', 'integer')
    .addColumn('error', 'text')
    .execute();
  await db.schema
    .createIndex('webhook_attempts_delivery_started')
    .on('webhook_attempts')
    .columns(['delivery_id', 'started_at'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['webhook_attempts', 'webhook_deliveries', 'webhook_endpoints', 'events'])
    await db.schema.dropTable(table).execute();
}
