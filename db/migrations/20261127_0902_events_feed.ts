// Frozen in time: a migration never imports application code, so it runs the same forever.
// The changes feed (GET /api/events) reads a student's events in commit order from a cursor, and must never skip one.
// created_at cannot order it: a transaction stamps its time before it commits, so a reader past an event of T2
// could later find an older event of T1 that committed after. Each event records instead the id of the transaction
// that wrote it (`txid`, xid8: never wraps) and its place in the transaction (`seq`); the feed lists only the events
// of transactions older than every transaction still running (pg_snapshot_xmin), all of them committed or gone, so
// a later event always sorts after any cursor issued before it. Rows that exist already all get this migration's
// transaction id, older than any later change. One index serves the feed's per-student order, the other the purge of
// events past their retention (by age, across students).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table events
    add column txid xid8 not null default pg_current_xact_id(),
    add column seq bigint generated always as identity`.execute(db);
  await db.schema.createIndex('events_user_feed').on('events').columns(['user_id', 'txid', 'seq']).execute();
  await db.schema.createIndex('events_created').on('events').column('created_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('events_created').execute();
  await db.schema.dropIndex('events_user_feed').execute();
  await sql`alter table events drop column seq, drop column txid`.execute(db);
}
