// The sync-pull-page scenario's student: 5,000 tasks and a deck of 2,000 cards (issue 38's large account), made in bulk
// statements, and the tokens of its full sync's pages (of SYNC_PAGE), in the order a phone asks for them. A full sync's
// token names where the paging stands (services/sync/token.ts), so the pages are known without asking for them.
import { sql } from 'kysely';
import type { Db } from '../../db/connect.ts';
import { insertDeck } from '../../db/queries/flashcards.ts';
import { insertAccount } from '../../db/queries/profile.ts';
import { horizonCursor } from '../../services/events/feed.ts';
import { fullSyncToken, SYNC_KINDS } from '../../services/sync/token.ts';

export const SYNC_STUDENT_TASKS = 5_000;
export const SYNC_STUDENT_CARDS = 2_000;
/** The page the sync gives by default (its `limit`'s default), the size of the list-tasks scenario's page. */
export const SYNC_PAGE = 20;

/** Makes the student; returns its id and the `sync_token` of each page of its full sync, `*` first. */
export async function createSyncStudent(
  db: Db,
  now: Date,
): Promise<{ userId: string; email: string; pageTokens: string[] }> {
  const email = `bench-sync-${now.getTime()}@study-companion.example`;
  const { id: userId } = await insertAccount(db, {
    email,
    nickname: `bench_sync_${now.getTime()}`,
    first_name: 'Bench',
    time_zone: 'UTC',
    country_code: null,
    // No one signs in as it: the bench issues its access token directly.
    password_hash: 'not a hash: no sign-in',
  });
  await sql`
    insert into tasks (user_id, title, course, due_at, notes, created_at, updated_at)
    select ${userId}, 'Problem set ' || n, 'Course ' || (n % 12), ${now}::timestamptz + n * interval '1 hour',
           'Notes of task ' || n, ${now}, ${now}
    from generate_series(1, ${SYNC_STUDENT_TASKS}) n`.execute(db);
  const deckId = await insertDeck(db, { user_id: userId, title: 'Pharmacology', course: 'Medicine' }, now);
  await sql`
    insert into flashcard_cards (user_id, deck_id, front, back, next_due_at, created_at, updated_at)
    select ${userId}, ${deckId}, 'Drug ' || n, 'Its class and mechanism, card ' || n, ${now}, ${now}, ${now}
    from generate_series(1, ${SYNC_STUDENT_CARDS}) n`.execute(db);

  // The planner's statistics of a grown account, as PostgreSQL's autovacuum keeps them: without them it guesses a
  // handful of rows for one student, and sorts all of the student's rows after the page's id for each page instead of
  // reading them in the order of their (user_id, id) index. The embedded database analyzes nothing by itself (see the
  // report of issue 38); this measures the statement, not that.
  await sql`analyze tasks, flashcard_cards`.execute(db);

  const ids = async (table: 'tasks' | 'flashcard_decks' | 'flashcard_cards' | 'exams') =>
    (await db.selectFrom(table).select('id').where('user_id', '=', userId).orderBy('id').execute()).map((r) => r.id);
  const tables = { tasks: 'tasks', decks: 'flashcard_decks', cards: 'flashcard_cards', exams: 'exams' } as const;
  const items: Array<{ kind: (typeof SYNC_KINDS)[number]; id: string }> = [];
  for (const kind of SYNC_KINDS) for (const id of await ids(tables[kind])) items.push({ kind, id });
  const { rows } = await sql<{
    horizon: string;
  }>`select pg_snapshot_xmin(pg_current_snapshot())::text as horizon`.execute(db);
  const since = horizonCursor(rows[0]!.horizon, now);
  const pageTokens = ['*'];
  for (let given = SYNC_PAGE; given < items.length; given += SYNC_PAGE) {
    const last = items[given - 1]!;
    pageTokens.push(fullSyncToken(since, last.kind, last.id));
  }
  return { userId, email, pageTokens };
}
