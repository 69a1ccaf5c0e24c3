// Frozen in time: a migration never imports application code, so it runs the same forever.
// Flashcard decks grow into study decks (description, course, cards with SM-2 parameters, a log of graded reviews),
// and exam plans link decks and tasks to an exam date. flashcard_decks exists since 0001 (the partner surface
// counts its rows), so it is extended, not recreated.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('flashcard_decks')
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('course', 'text')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  // (id, user_id) is unique so that cards and exam links can reference a deck together with its owner: the
  // database itself then refuses a card or a link that crosses students.
  await db.schema
    .alterTable('flashcard_decks')
    .addUniqueConstraint('flashcard_decks_id_user_unique', ['id', 'user_id'])
    .execute();
  await db.schema
    .createIndex('flashcard_decks_user_created_idx')
    .on('flashcard_decks')
    .columns(['user_id', 'created_at', 'id'])
    .execute();

  await db.schema
    .createTable('flashcard_cards')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('deck_id', 'uuid', (c) => c.notNull())
    .addColumn('user_id', 'uuid', (c) => c.notNull())
    .addColumn('front', 'text', (c) => c.notNull())
    .addColumn('back', 'text', (c) => c.notNull())
    // SM-2 parameters. double precision round-trips exactly through both drivers, so `ease` is returned as stored.
    .addColumn('ease', 'double precision', (c) =>
      c
        .notNull()
        .defaultTo(2.5)
        .check(sql`ease >= 1.3`),
    )
    .addColumn('repetitions', 'integer', (c) =>
      c
        .notNull()
        .defaultTo(0)
        .check(sql`repetitions >= 0`),
    )
    .addColumn('interval_days', 'integer', (c) =>
      c
        .notNull()
        .defaultTo(0)
        .check(sql`interval_days >= 0`),
    )
    .addColumn('next_due_at', 'timestamptz', (c) => c.notNull())
    .addColumn('last_reviewed_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addForeignKeyConstraint(
      'flashcard_cards_deck_fk',
      ['deck_id', 'user_id'],
      'flashcard_decks',
      ['id', 'user_id'],
      (c) => c.onDelete('cascade'),
    )
    .execute();
  await db.schema
    .createIndex('flashcard_cards_deck_created_idx')
    .on('flashcard_cards')
    .columns(['deck_id', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('flashcard_cards_user_due_idx')
    .on('flashcard_cards')
    .columns(['user_id', 'next_due_at'])
    .execute();

  // One row per graded review, written in the card update's transaction. The id may be chosen by the client so a
  // retried request is recognised. card_id is cleared, not cascaded, when a card goes: study days stay counted.
  await db.schema
    .createTable('flashcard_reviews')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('card_id', 'uuid', (c) => c.references('flashcard_cards.id').onDelete('set null'))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('grade', 'smallint', (c) => c.notNull().check(sql`grade between 0 and 5`))
    .addColumn('reviewed_at', 'timestamptz', (c) => c.notNull())
    // The SM-2 parameters this review produced.
    .addColumn('ease', 'double precision', (c) => c.notNull())
    .addColumn('repetitions', 'integer', (c) => c.notNull())
    .addColumn('interval_days', 'integer', (c) => c.notNull())
    .addColumn('next_due_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('flashcard_reviews_user_reviewed_idx')
    .on('flashcard_reviews')
    .columns(['user_id', 'reviewed_at'])
    .execute();
  await db.schema.createIndex('flashcard_reviews_card_idx').on('flashcard_reviews').column('card_id').execute();

  await db.schema
    .createTable('exams')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('exam_date', 'date', (c) => c.notNull())
    .addColumn('notes', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('exams_id_user_unique', ['id', 'user_id'])
    .execute();
  await db.schema.createIndex('exams_user_date_idx').on('exams').columns(['user_id', 'exam_date', 'id']).execute();

  await db.schema
    .createTable('exam_decks')
    .addColumn('exam_id', 'uuid', (c) => c.notNull())
    .addColumn('deck_id', 'uuid', (c) => c.notNull())
    .addColumn('user_id', 'uuid', (c) => c.notNull())
    .addPrimaryKeyConstraint('exam_decks_pk', ['exam_id', 'deck_id'])
    .addForeignKeyConstraint('exam_decks_exam_fk', ['exam_id', 'user_id'], 'exams', ['id', 'user_id'], (c) =>
      c.onDelete('cascade'),
    )
    .addForeignKeyConstraint('exam_decks_deck_fk', ['deck_id', 'user_id'], 'flashcard_decks', ['id', 'user_id'], (c) =>
      c.onDelete('cascade'),
    )
    .execute();
  await db.schema.createIndex('exam_decks_deck_idx').on('exam_decks').column('deck_id').execute();

  // tasks belongs to the tasks migration (0003); its ownership is checked when a link is written.
  await db.schema
    .createTable('exam_tasks')
    .addColumn('exam_id', 'uuid', (c) => c.notNull())
    .addColumn('task_id', 'uuid', (c) => c.notNull().references('tasks.id').onDelete('cascade'))
    .addColumn('user_id', 'uuid', (c) => c.notNull())
    .addPrimaryKeyConstraint('exam_tasks_pk', ['exam_id', 'task_id'])
    .addForeignKeyConstraint('exam_tasks_exam_fk', ['exam_id', 'user_id'], 'exams', ['id', 'user_id'], (c) =>
      c.onDelete('cascade'),
    )
    .execute();
  await db.schema.createIndex('exam_tasks_task_idx').on('exam_tasks').column('task_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['exam_tasks', 'exam_decks', 'exams', 'flashcard_reviews', 'flashcard_cards']) {
    await db.schema.dropTable(table).execute();
  }
  await db.schema.dropIndex('flashcard_decks_user_created_idx').execute();
  await db.schema.alterTable('flashcard_decks').dropConstraint('flashcard_decks_id_user_unique').execute();
  for (const column of ['description', 'course', 'updated_at']) {
    await db.schema.alterTable('flashcard_decks').dropColumn(column).execute();
  }
}
