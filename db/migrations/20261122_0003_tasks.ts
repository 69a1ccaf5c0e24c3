// Frozen in time: a migration never imports application code, so it runs the same forever.
// Tasks (one-off or occurrences of a recurring series) and the stored first responses of idempotent requests.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('tasks')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('course', 'text')
    .addColumn('due_at', 'timestamptz', (c) => c.notNull())
    .addColumn('status', 'text', (c) =>
      c
        .notNull()
        .defaultTo('open')
        .check(sql`status in ('open', 'completed')`),
    )
    .addColumn('completed_at', 'timestamptz')
    .addColumn('notes', 'text')
    .addColumn('priority', 'text', (c) =>
      c
        .notNull()
        .defaultTo('normal')
        .check(sql`priority in ('low', 'normal', 'high')`),
    )
    // An iCalendar RRULE value; its DTSTART is series_starts_at, its wall-clock time the student's time zone.
    .addColumn('recurrence', 'text')
    // The id of the series' first occurrence (no foreign key: that occurrence may be deleted, the series lives on).
    .addColumn('series_id', 'uuid')
    .addColumn('series_starts_at', 'timestamptz')
    // The occurrence whose closing created this one. Unique, so closing an occurrence again (after reopening it,
    // or in two racing requests) can never create a second successor.
    .addColumn('previous_id', 'uuid', (c) => c.unique().references('tasks.id').onDelete('set null'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('tasks_completed_at_check', sql`(status = 'completed') = (completed_at is not null)`)
    .addCheckConstraint(
      'tasks_recurrence_check',
      sql`(recurrence is null) = (series_starts_at is null) and (recurrence is null or series_id is not null)`,
    )
    .execute();
  // Lists and the schedule read a student's tasks by due time; the id makes the sort key unique for cursors.
  await db.schema.createIndex('tasks_user_due_idx').on('tasks').columns(['user_id', 'due_at', 'id']).execute();

  // The first successful response to a student's Idempotency-Key, written in the same transaction as what the
  // request created, so neither exists without the other. Rows older than expires_at count as absent.
  await db.schema
    .createTable('idempotency_keys')
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('response_status', 'smallint', (c) => c.notNull())
    .addColumn('response_body', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['user_id', 'key'])
    .execute();
  await db.schema.createIndex('idempotency_keys_expires_idx').on('idempotency_keys').column('expires_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('idempotency_keys').execute();
  await db.schema.dropTable('tasks').execute();
}
