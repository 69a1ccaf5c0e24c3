// Frozen in time: a migration never imports application code, so it runs the same forever.
// Payments and warnings, and one vocabulary for plans. Until now an account had two plan columns that could disagree:
// `plan` (free | plus | contract, which sets the limits) and the partner surface's older `premium_tier`
// (free | plus | pro). `plan` becomes the one record; partner v1 keeps showing `premium_tier`, computed from it
// (contract → pro). An account still on the default plan takes its tier over: plus → plus, pro → contract with the
// plus limits as its agreed ones (an operator changes them with `users plan`).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`update users set plan = 'plus' where plan = 'free' and premium_tier = 'plus'`.execute(db);
  await sql`update users set plan = 'contract', contract_per_minute = 600, contract_per_day = 100000, contract_ai_per_hour = 200
    where plan = 'free' and premium_tier = 'pro'`.execute(db);
  await db.schema.alterTable('users').dropColumn('premium_tier').execute();

  await db.schema
    .createTable('payments')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('plan', 'text', (c) => c.notNull().check(sql`plan in ('plus', 'contract')`))
    // In the currency's minor unit.
    .addColumn('amount', 'integer', (c) => c.notNull().check(sql`amount >= 0`))
    .addColumn('currency', 'text', (c) => c.notNull().check(sql`currency ~ '^[A-Z]{3}$'`))
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('provider_event_id', 'text', (c) => c.notNull())
    .addColumn('paid_at', 'timestamptz', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    // A provider's event is recorded once, however often it is delivered.
    .addUniqueConstraint('payments_provider_event_unique', ['provider', 'provider_event_id'])
    .execute();
  await db.schema.createIndex('payments_user_paid').on('payments').columns(['user_id', 'paid_at']).execute();

  await db.schema
    .createTable('warnings')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('reason', 'text', (c) => c.notNull().check(sql`length(reason) between 1 and 1000`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('warnings_user_created').on('warnings').columns(['user_id', 'created_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('warnings').execute();
  await db.schema.dropTable('payments').execute();
  await db.schema
    .alterTable('users')
    .addColumn('premium_tier', 'text', (c) => c.notNull().defaultTo('free'))
    .execute();
  await sql`update users set premium_tier = case plan when 'contract' then 'pro' else plan end`.execute(db);
}
