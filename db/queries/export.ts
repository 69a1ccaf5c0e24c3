// The account export (exportMyAccount): every record of one student, read in keyset pages so that the document is
// written as it is read and memory stays bounded however many rows there are. Explicit column lists: no secret,
// password hash, key hash or token hash is selected here, so none can reach the document.
import { sql } from 'kysely';
import { embeddedDatabaseOf, type Db } from '../connect.ts';

/** Rows per page: one page is one write of the document, a few hundred KB at most for long tutor replies. */
export const EXPORT_PAGE_SIZE = 200;
/**
 * Rows per page on the embedded database, which runs each query on the event loop's thread: a page of 200 tasks with
 * the longest notes (5,000 characters) blocks every other request for longer than the event-loop budget (100 ms, the
 * tests' guard); a quarter of it stays well under, whatever the student stored.
 */
export const EMBEDDED_EXPORT_PAGE_SIZE = 50;

/**
 * Runs `read` on a snapshot: on PostgreSQL one read-only REPEATABLE READ transaction, so every array is as of the
 * same moment. The caller reads at the database's speed (into a temporary file, not at the client's), so the
 * transaction lasts the read time. PGlite (one process, one connection) runs everything else of the process behind an
 * open transaction, and a large account takes seconds to read: there each page is read on its own instead, so other
 * requests go between the pages.
 */
export async function inExportSnapshot<T>(db: Db, read: (reader: Db) => Promise<T>): Promise<T> {
  if (embeddedDatabaseOf(db)) return read(db);
  return db.transaction().setIsolationLevel('repeatable read').setAccessMode('read only').execute(read);
}

/** The profile as stored with the operator's warnings (a handful: read whole), or undefined for a deleted account. */
export async function exportUser(db: Db, userId: string) {
  const user = await db
    .selectFrom('users')
    .select([
      'id',
      'email',
      'nickname',
      'first_name',
      'avatar_url',
      'bio',
      'time_zone',
      'country_code',
      'university_id',
      'plan',
      'xp',
      'streak',
      'last_study_date',
      'last_active_at',
      'created_at',
      'updated_at',
    ])
    .where('id', '=', userId)
    .executeTakeFirst();
  if (!user) return undefined;
  const warnings = await db
    .selectFrom('warnings')
    .select(['id', 'reason', 'created_at'])
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return { ...user, warnings };
}

/** One page of a section: the rows after `after` (by the section's key, ascending), at most `limit`. */
type PageReader = (
  db: Db,
  userId: string,
  after: string | undefined,
  limit: number,
) => Promise<Array<Record<string, unknown>>>;

interface ExportSection {
  /** The array's name in the document (AccountExport in the spec). */
  name: string;
  /** The unique key the section is ordered and paged by. */
  key: string;
  /** The table has an index on (user_id, key) (migration 20261124_0005): each page is read along it, never sorted. */
  indexed?: true;
  page: PageReader;
}

/** Every array of the document after `user`, in the spec's order. */
export const EXPORT_SECTIONS: readonly ExportSection[] = [
  {
    name: 'tasks',
    key: 'id',
    indexed: true,
    page: (db, userId, after, limit) =>
      db
        .selectFrom('tasks')
        .select([
          'id',
          'title',
          'course',
          'notes',
          'priority',
          'status',
          'due_at',
          'completed_at',
          'recurrence',
          'series_id',
          'series_starts_at',
          'previous_id',
          'created_at',
          'updated_at',
        ])
        .where('user_id', '=', userId)
        .$if(after !== undefined, (q) => q.where('id', '>', after!))
        .orderBy('id')
        .limit(limit)
        .execute(),
  },
  {
    name: 'exams',
    key: 'id',
    page: (db, userId, after, limit) =>
      db
        .selectFrom('exams as e')
        .select(['e.id', 'e.subject', 'e.exam_date', 'e.notes'])
        // text[]: both drivers parse it into strings (a uuid[] parser is not certain on both).
        .select(
          sql<
            string[]
          >`array(select l.deck_id::text from exam_decks l where l.exam_id = e.id and l.user_id = e.user_id order by 1)`.as(
            'deck_ids',
          ),
        )
        .select(
          sql<
            string[]
          >`array(select l.task_id::text from exam_tasks l where l.exam_id = e.id and l.user_id = e.user_id order by 1)`.as(
            'task_ids',
          ),
        )
        .select(['e.created_at', 'e.updated_at'])
        .where('e.user_id', '=', userId)
        .$if(after !== undefined, (q) => q.where('e.id', '>', after!))
        .orderBy('e.id')
        .limit(limit)
        .execute(),
  },
  {
    name: 'readiness',
    key: 'exam_id',
    page: (db, userId, after, limit) =>
      db
        .selectFrom('exam_readiness')
        .select(['exam_id', 'state', 'moved_at'])
        .where('user_id', '=', userId)
        .$if(after !== undefined, (q) => q.where('exam_id', '>', after!))
        .orderBy('exam_id')
        .limit(limit)
        .execute(),
  },
  {
    name: 'flashcard_decks',
    key: 'id',
    page: (db, userId, after, limit) =>
      db
        .selectFrom('flashcard_decks')
        .select(['id', 'title', 'description', 'course', 'scheduler', 'fsrs_parameters', 'created_at', 'updated_at'])
        .where('user_id', '=', userId)
        .$if(after !== undefined, (q) => q.where('id', '>', after!))
        .orderBy('id')
        .limit(limit)
        .execute(),
  },
  {
    name: 'flashcard_cards',
    key: 'id',
    indexed: true,
    page: (db, userId, after, limit) =>
      db
        .selectFrom('flashcard_cards')
        .select([
          'id',
          'deck_id',
          'front',
          'back',
          'ease',
          'repetitions',
          'interval_days',
          'next_due_at',
          'last_reviewed_at',
          'fsrs_state as fsrs',
          'created_at',
          'updated_at',
        ])
        .where('user_id', '=', userId)
        .$if(after !== undefined, (q) => q.where('id', '>', after!))
        .orderBy('id')
        .limit(limit)
        .execute(),
  },
  {
    name: 'flashcard_reviews',
    key: 'id',
    indexed: true,
    page: (db, userId, after, limit) =>
      db
        .selectFrom('flashcard_reviews')
        .select([
          'id',
          'card_id',
          'grade',
          'reviewed_at',
          'applied',
          'ease',
          'repetitions',
          'interval_days',
          'next_due_at',
        ])
        .where('user_id', '=', userId)
        .$if(after !== undefined, (q) => q.where('id', '>', after!))
        .orderBy('id')
        .limit(limit)
        .execute(),
  },
  {
    name: 'xp_awards',
    key: 'award_key',
    page: (db, userId, after, limit) =>
      db
        .selectFrom('xp_awards')
        .select(['award_key', 'source', 'amount', 'local_date', 'awarded_at'])
        .where('user_id', '=', userId)
        .$if(after !== undefined, (q) => q.where('award_key', '>', after!))
        .orderBy('award_key')
        .limit(limit)
        .execute(),
  },
  {
    name: 'ai_conversations',
    key: 'id',
    page: (db, userId, after, limit) =>
      db
        .selectFrom('ai_conversations')
        .select(['id', 'title', 'created_at', 'updated_at'])
        .where('user_id', '=', userId)
        .$if(after !== undefined, (q) => q.where('id', '>', after!))
        .orderBy('id')
        .limit(limit)
        .execute(),
  },
  {
    name: 'ai_messages',
    key: 'id',
    indexed: true,
    page: (db, userId, after, limit) =>
      db
        .selectFrom('ai_messages')
        .select(['id', 'conversation_id', 'role', 'content', 'finish_reason', 'created_at'])
        .where('user_id', '=', userId)
        .$if(after !== undefined, (q) => q.where('id', '>', after!))
        .orderBy('id')
        .limit(limit)
        .execute(),
  },
  {
    name: 'webhook_endpoints',
    key: 'id',
    // Never secret_sealed nor previous_secret_sealed.
    page: (db, userId, after, limit) =>
      db
        .selectFrom('webhook_endpoints')
        .select([
          'id',
          'url',
          'event_types',
          'description',
          'enabled',
          'disabled_reason',
          'failing_since',
          'created_at',
          'updated_at',
        ])
        .where('user_id', '=', userId)
        .$if(after !== undefined, (q) => q.where('id', '>', after!))
        .orderBy('id')
        .limit(limit)
        .execute(),
  },
  {
    name: 'personal_api_keys',
    key: 'id',
    // Never key_hash.
    page: (db, userId, after, limit) =>
      db
        .selectFrom('api_keys')
        .select(['id', 'prefix', 'name', 'scopes', 'created_at', 'last_used_at', 'revoked_at'])
        .where('user_id', '=', userId)
        .$if(after !== undefined, (q) => q.where('id', '>', after!))
        .orderBy('id')
        .limit(limit)
        .execute(),
  },
  {
    name: 'calendar_feeds',
    key: 'id',
    // Never token_hash.
    page: (db, userId, after, limit) =>
      db
        .selectFrom('calendar_feeds')
        .select([
          'id',
          'prefix',
          'name',
          'created_at',
          'last_used_at',
          'revoked_at',
          'include_notes',
          'kinds',
          'course',
          'reminder_minutes',
        ])
        .where('user_id', '=', userId)
        .$if(after !== undefined, (q) => q.where('id', '>', after!))
        .orderBy('id')
        .limit(limit)
        .execute()
        // The student's choices as the feed's listing shows them.
        .then((rows) =>
          rows.map(({ reminder_minutes, ...feed }) => ({
            ...feed,
            reminders: reminder_minutes.map((minutes) => ({ minutes_before: minutes })),
          })),
        ),
  },
  {
    name: 'authorizations',
    key: 'id',
    // The grants only: their codes and refresh tokens are credentials, stored as hashes.
    page: (db, userId, after, limit) =>
      db
        .selectFrom('oauth_grants as g')
        .innerJoin('oauth_clients as c', 'c.id', 'g.client_id')
        .select([
          'g.id',
          'g.client_id',
          'c.name as client_name',
          'g.scopes',
          'g.created_at as granted_at',
          'g.revoked_at',
          'g.revoked_reason',
        ])
        .where('g.user_id', '=', userId)
        .$if(after !== undefined, (q) => q.where('g.id', '>', after!))
        .orderBy('g.id')
        .limit(limit)
        .execute(),
  },
  {
    name: 'oauth_clients',
    key: 'id',
    // Never secret_hash.
    page: (db, userId, after, limit) =>
      db
        .selectFrom('oauth_clients')
        .select(['id', 'name', 'redirect_uris', 'grants', 'scopes', 'created_at'])
        .where('owner_user_id', '=', userId)
        .$if(after !== undefined, (q) => q.where('id', '>', after!))
        .orderBy('id')
        .limit(limit)
        .execute(),
  },
  {
    name: 'payments',
    key: 'id',
    page: (db, userId, after, limit) =>
      db
        .selectFrom('payments')
        .select(['id', 'plan', 'amount', 'currency', 'provider', 'provider_event_id', 'paid_at'])
        .where('user_id', '=', userId)
        .$if(after !== undefined, (q) => q.where('id', '>', after!))
        .orderBy('id')
        .limit(limit)
        .execute(),
  },
  {
    name: 'study_rooms',
    key: 'id',
    page: (db, userId, after, limit) =>
      db
        .selectFrom('study_room_members')
        .innerJoin('study_rooms', 'study_rooms.id', 'study_room_members.room_id')
        .select([
          'study_rooms.id',
          'study_rooms.name',
          'study_rooms.course',
          sql<
            'owner' | 'member'
          >`case when study_rooms.created_by = study_room_members.user_id then 'owner' else 'member' end`.as('role'),
          'study_room_members.joined_at',
          'study_rooms.created_at',
        ])
        .where('study_room_members.user_id', '=', userId)
        .$if(after !== undefined, (q) => q.where('study_rooms.id', '>', after!))
        .orderBy('study_rooms.id')
        .limit(limit)
        .execute(),
  },
];

/** The section's rows page by page, each page once read; the caller writes one before the next is read. */
export async function* exportPages(
  section: ExportSection,
  db: Db,
  userId: string,
  limit = embeddedDatabaseOf(db) ? EMBEDDED_EXPORT_PAGE_SIZE : EXPORT_PAGE_SIZE,
): AsyncGenerator<Array<Record<string, unknown>>> {
  let after: string | undefined;
  for (;;) {
    const read = (reader: Db) => section.page(reader, userId, after, limit);
    const rows = section.indexed ? await withoutSorting(db, read) : await read(db);
    if (rows.length > 0) yield rows;
    if (rows.length < limit) return;
    after = String(rows.at(-1)![section.key]);
  }
}

/**
 * Runs `read` with sorting ruled out, so that a page is read along the (user_id, id) index. Without statistics (PGlite
 * has no autovacuum; a bulk import before ANALYZE) the planner guesses a student has a few hundred rows and sorts all
 * of them for every page, which turned an export of 100,000 tasks from seconds into minutes. SET LOCAL lasts for
 * the transaction: inside the export's snapshot it is set back after the page; elsewhere the page gets its own.
 */
async function withoutSorting<T>(db: Db, read: (reader: Db) => Promise<T>): Promise<T> {
  if (!db.isTransaction) return db.transaction().execute((trx) => withoutSorting(trx, read));
  await sql`set local enable_sort = off`.execute(db);
  const result = await read(db);
  await sql`set local enable_sort to default`.execute(db);
  return result;
}
