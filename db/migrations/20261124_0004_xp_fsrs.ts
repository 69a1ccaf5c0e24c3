// Frozen in time: a migration never imports application code, so it runs the same forever.
// XP that moves. `xp_awards` is the ledger behind users.xp: one row per thing that earned (or was refused) xp, keyed
// by (user_id, award_key) so a retried request or two racing ones can award a given thing at most once. The key names
// what is awarded: `review:<card>:<local date>`, `task:<task>`, `readiness:<exam>:<milestone>`. `local_date` is the
// student's day of the action, which the daily cap sums over. Rows go with the user (another helper deletes accounts).
// A review may now be recorded without moving its card (an offline review older than the card's last one):
// `flashcard_reviews.applied` says which.
// FSRS per deck: `flashcard_decks.scheduler` ('sm2', the default, or 'fsrs') and the deck's FSRS parameters as the
// student set them (jsonb, null until set); `flashcard_cards.fsrs_state`, the card's FSRS memory (null until its
// first FSRS review), kept beside its SM-2 columns so switching a deck's scheduler back and forth loses neither.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('xp_awards')
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('award_key', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull().check(sql`source in ('review', 'task', 'readiness')`))
    .addColumn('amount', 'integer', (c) => c.notNull().check(sql`amount >= 0`))
    .addColumn('local_date', 'date', (c) => c.notNull())
    .addColumn('awarded_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('xp_awards_pk', ['user_id', 'award_key'])
    .execute();
  await db.schema.createIndex('xp_awards_user_date_idx').on('xp_awards').columns(['user_id', 'local_date']).execute();
  await db.schema
    .alterTable('flashcard_reviews')
    .addColumn('applied', 'boolean', (c) => c.notNull().defaultTo(true))
    .execute();
  await db.schema
    .alterTable('flashcard_decks')
    .addColumn('scheduler', 'text', (c) =>
      c
        .notNull()
        .defaultTo('sm2')
        .check(sql`scheduler in ('sm2', 'fsrs')`),
    )
    .addColumn('fsrs_parameters', 'jsonb')
    .execute();
  await db.schema.alterTable('flashcard_cards').addColumn('fsrs_state', 'jsonb').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('flashcard_cards').dropColumn('fsrs_state').execute();
  await db.schema.alterTable('flashcard_decks').dropColumn('fsrs_parameters').dropColumn('scheduler').execute();
  await db.schema.alterTable('flashcard_reviews').dropColumn('applied').execute();
  await db.schema.dropTable('xp_awards').execute();
}
