// Frozen in time: a migration never imports application code, so it runs the same forever.
// AI tutor conversations. ai_messages exists since 0001 (the partner surface counts its rows), so it is extended,
// not recreated: a message now belongs to a conversation, and a reply records how it ended.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('ai_conversations')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    // Lets messages reference a conversation together with its owner, so the database refuses a message filed
    // under another student's conversation.
    .addUniqueConstraint('ai_conversations_id_user_unique', ['id', 'user_id'])
    .execute();

  // Messages written before conversations existed (demo data) have none: conversation_id stays nullable.
  await db.schema
    .alterTable('ai_messages')
    .addColumn('conversation_id', 'uuid')
    // How a reply ended: 'stop' or 'length' when complete, 'interrupted' when the client left, 'error' when the
    // provider failed. Null for the student's messages (and for replies from before this column).
    .addColumn('finish_reason', 'text', (c) =>
      c.check(sql`finish_reason in ('stop', 'length', 'interrupted', 'error')`),
    )
    .execute();
  await db.schema
    .alterTable('ai_messages')
    .addForeignKeyConstraint(
      'ai_messages_conversation_fk',
      ['conversation_id', 'user_id'],
      'ai_conversations',
      ['id', 'user_id'],
      (c) => c.onDelete('cascade'),
    )
    .execute();
  await db.schema
    .createIndex('ai_messages_conversation_created_idx')
    .on('ai_messages')
    .columns(['conversation_id', 'created_at', 'id'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('ai_messages').dropConstraint('ai_messages_conversation_fk').execute();
  await db.schema.dropIndex('ai_messages_conversation_created_idx').execute();
  await db.schema.alterTable('ai_messages').dropColumn('conversation_id').dropColumn('finish_reason').execute();
  await db.schema.dropTable('ai_conversations').execute();
}
