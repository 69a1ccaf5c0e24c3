// Frozen in time: a migration never imports application code, so it runs the same forever.
// The readiness stream's memory. `readiness_versions` counts the moves of each student's readiness (its row is also
// the lock that puts concurrent moves of one student in order); `exam_readiness` holds, per exam, the state last
// pushed and the version that pushed it, so a stream that reconnects with Last-Event-ID gets every exam that moved
// since. A row whose `state` is null is a tombstone: the exam was deleted or left the schedule, which a reconnecting
// stream must hear too, so it has no foreign key to `exams`.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('readiness_versions')
    .addColumn('user_id', 'uuid', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('version', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('exam_readiness')
    .addColumn('exam_id', 'uuid', (c) => c.primaryKey())
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('version', 'bigint', (c) => c.notNull())
    .addColumn('state', 'jsonb')
    .addColumn('moved_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex('exam_readiness_user_version')
    .on('exam_readiness')
    .columns(['user_id', 'version'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('exam_readiness').execute();
  await db.schema.dropTable('readiness_versions').execute();
}
