// Frozen in time: a migration never imports application code, so it runs the same forever.
// A calendar feed shows only what its creator's credential could read, and notes only when the student asked:
//   - `scopes`: the reading scopes (tasks:read, exams:read) the creating credential held; a feed read also needs its
//     grant to hold them still. Feeds made before this keep what they showed, within their grant's scopes;
//   - `include_notes`: task and exam notes in the events' descriptions. Off for every feed made before this: notes
//     are the most private field, and those feeds' URLs were shared without anyone choosing to share notes.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('calendar_feeds')
    .addColumn('scopes', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{tasks:read,exams:read}'`))
    .addColumn('include_notes', 'boolean', (c) => c.notNull().defaultTo(false))
    .execute();
  await sql`update calendar_feeds set scopes = array(select unnest(calendar_feeds.scopes) intersect select unnest(g.scopes))
    from oauth_grants g where g.id = calendar_feeds.grant_id`.execute(db);
  // A new feed always says what it may show.
  await sql`alter table calendar_feeds alter column scopes drop default`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('calendar_feeds').dropColumn('scopes').dropColumn('include_notes').execute();
}
