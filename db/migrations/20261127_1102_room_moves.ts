// Frozen in time: a migration never imports application code, so it runs the same forever.
// What a room's stream tells its members (services/rooms/room-stream.ts), kept so that a stream resumed with
// Last-Event-ID on any process sends what was missed: one row per move (a member's stream opened or closed, the
// timer started, paused, resumed, stopped or finished), numbered by an identity. Every move is written under the
// room's row lock, so a room's numbers grow in commit order; the room's moves go with it, and are kept a day.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('study_room_moves')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('room_id', 'uuid', (c) => c.notNull().references('study_rooms.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('data', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('study_room_moves_by_room').on('study_room_moves').columns(['room_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('study_room_moves').execute();
}
