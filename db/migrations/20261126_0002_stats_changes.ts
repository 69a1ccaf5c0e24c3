// Frozen in time: a migration never imports application code, so it runs the same forever.
// /api/v1/stats is kept in each process's memory (db/queries/stats.ts) and dropped when what it counts changes. Every
// such change already appends a row to one of its two delta tables (the counted tables' triggers,
// 20261124_0007_stats_counters; the moves between hours of last activity, 20261125_0401_activity_hours), so these
// triggers send a NOTIFY on the `stats` channel (db/notifications.ts; the function is 20261126_0001's notify_channel)
// for each row appended there. Row level: a statement that counts nothing appends no row and notifies nobody. NOTIFY
// is sent by the commit and collapsed to one per transaction.
import { sql, type Kysely } from 'kysely';

const DELTA_TABLES = ['stat_counter_deltas', 'activity_hour_deltas'];

export async function up(db: Kysely<any>): Promise<void> {
  for (const table of DELTA_TABLES) {
    await sql`create trigger ${sql.id(`${table}_notify`)} after insert on ${sql.table(table)}
      for each row execute function notify_channel('stats')`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of DELTA_TABLES)
    await sql`drop trigger ${sql.id(`${table}_notify`)} on ${sql.table(table)}`.execute(db);
}
