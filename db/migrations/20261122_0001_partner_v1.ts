// Frozen in time: a migration never imports application code, so it runs the same forever.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('universities')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('short_name', 'text', (c) => c.notNull())
    .addColumn('city', 'text', (c) => c.notNull())
    .addColumn('country', 'char(2)', (c) => c.notNull().check(sql`country = upper(country)`))
    .addColumn('student_count', 'integer', (c) => c.notNull().check(sql`student_count >= 0`))
    .addColumn('is_verified', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('default_academic_system', 'text', (c) => c.notNull())
    .addColumn('default_gpa_scale', 'text', (c) => c.notNull())
    .addColumn('website', 'text')
    .addColumn('founded_year', 'integer')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('universities_name_country_unique', ['name', 'country'])
    .execute();
  await db.schema
    .createIndex('universities_country_students_idx')
    .on('universities')
    .columns(['country', 'student_count desc'])
    .execute();

  await db.schema
    .createTable('users')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('nickname', 'text', (c) => c.notNull())
    .addColumn('first_name', 'text', (c) => c.notNull())
    .addColumn('avatar_url', 'text')
    .addColumn('bio', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('xp', 'integer', (c) =>
      c
        .notNull()
        .defaultTo(0)
        .check(sql`xp >= 0`),
    )
    .addColumn('streak', 'integer', (c) =>
      c
        .notNull()
        .defaultTo(0)
        .check(sql`streak >= 0`),
    )
    .addColumn('premium_tier', 'text', (c) => c.notNull().defaultTo('free'))
    .addColumn('university_id', 'uuid', (c) => c.references('universities.id').onDelete('set null'))
    .addColumn('last_active_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  // Nicknames are unique regardless of case: /users/{nickname}/public looks them up case-insensitively.
  await db.schema
    .createIndex('users_nickname_lower_unique')
    .on('users')
    .unique()
    .expression(sql`lower(nickname)`)
    .execute();
  await db.schema.createIndex('users_xp_idx').on('users').columns(['xp desc', 'id']).execute();
  await db.schema.createIndex('users_university_xp_idx').on('users').columns(['university_id', 'xp desc']).execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('prefix', 'text', (c) => c.notNull().unique())
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('per_minute', 'integer', (c) => c.notNull().check(sql`per_minute > 0`))
    .addColumn('per_day', 'integer', (c) => c.notNull().check(sql`per_day > 0`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_used_at', 'timestamptz')
    .addColumn('revoked_at', 'timestamptz')
    .execute();

  await db.schema
    .createTable('flashcard_decks')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('ai_messages')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('user', 'assistant')`))
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('study_rooms')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_by', 'uuid', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('holiday_countries')
    .addColumn('country_code', 'char(2)', (c) => c.primaryKey().check(sql`country_code = upper(country_code)`))
    .addColumn('enabled_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('holidays')
    .addColumn('country_code', 'char(2)', (c) =>
      c.notNull().references('holiday_countries.country_code').onDelete('cascade'),
    )
    .addColumn('on_date', 'date', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('is_break', 'boolean', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('holidays_pk', ['country_code', 'on_date', 'name'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    'holidays',
    'holiday_countries',
    'study_rooms',
    'ai_messages',
    'flashcard_decks',
    'api_keys',
    'users',
    'universities',
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
