// Frozen in time: a migration never imports application code, so it runs the same forever.
// What lets the worker finish study rooms' focus sessions and end lapsed presences without anyone watching
// (services/rooms/sweep.ts):
//   - the running sessions by their planned end (started_at + paused_ms + duration_ms), so a sweep reads the ones
//     due with one index range, whatever the number of rooms. timestamptz + interval is not immutable (an interval's
//     days follow the session's zone), so the index takes the end as UTC wall time, which is;
//   - a row per room stream that announced its member present (`joined`), deleted with the `left` move that ends it,
//     by the stream or, once the stream's lease lapsed (its process died), by the sweep: whichever deletes the row
//     writes the one `left`.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('study_room_sessions_running_end')
    .on('study_room_sessions')
    .expression(sql`((started_at at time zone 'UTC') + (paused_ms + duration_ms) * interval '1 millisecond')`)
    .where(sql.ref('stopped_at'), 'is', null)
    .where(sql.ref('finished_at'), 'is', null)
    .where(sql.ref('paused_at'), 'is', null)
    .execute();

  await db.schema
    .createTable('study_room_presences')
    // The open_streams row of the stream (no reference: that row is deleted when the stream ends or its lease lapses,
    // and this one must outlive it until the `left` move is written).
    .addColumn('stream_id', 'uuid', (c) => c.primaryKey())
    .addColumn('room_id', 'uuid', (c) => c.notNull().references('study_rooms.id').onDelete('cascade'))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('opened_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('study_room_presences_by_room').on('study_room_presences').column('room_id').execute();
  await db.schema.createIndex('study_room_presences_by_user').on('study_room_presences').column('user_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('study_room_presences').execute();
  await db.schema.dropIndex('study_room_sessions_running_end').execute();
}
