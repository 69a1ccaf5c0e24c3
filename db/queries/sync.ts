// The sync's reads (services/sync/pull.ts): a student's tasks, decks, cards or exams, either a page in id order for a
// full sync (a key that never moves, unlike a due date, so a page resumed in a later snapshot skips nothing) or the
// objects a change since a token names. Each with the columns its REST operation answers with. A page is built and
// compiled by Kysely once per process (compiledOnce) and runs as a named prepared statement: a large account's full
// sync is hundreds of pages, and building and compiling the query again on each was the largest part of the sync's
// own work in a page's profile (issue 38). The rows of ids, whose text varies with their number, are built on each
// call and sent unnamed.
import type { SelectQueryBuilder } from 'kysely';
import type { Db } from '../connect.ts';
import { compiledOnce } from '../prepared-statements.ts';
import type { Database } from '../schema.ts';
import { EXAM_COLUMNS } from './exams.ts';
import { CARD_COLUMNS, decksWithSummary } from './flashcards.ts';
import { TASK_COLUMNS } from './tasks.ts';

/** A page after `afterId` (from the first when absent), or the rows of `ids` (those that still exist). */
export type SyncSelection = { afterId: string | undefined; limit: number } | { ids: readonly string[] };

/** Whose rows, and the instant a deck's counts are taken at. */
interface Student {
  userId: string;
  now?: Date;
}

interface PageValues extends Student {
  afterId: string | undefined;
  limit: number;
}

type Rows<O> = (db: Db, values: Student) => SelectQueryBuilder<Database, any, O>;

/**
 * A kind's rows of one student as the sync reads them: a page in id order from one of two statements compiled once
 * (from the first row, and after an id), or the rows of some ids. `uses` names the values `rows` takes.
 */
function syncReader<O>(id: 'id' | 'd.id', uses: ReadonlyArray<keyof Student>, rows: Rows<O>) {
  const first = compiledOnce<PageValues, O>([...uses, 'limit'], (db, v) => rows(db, v).orderBy(id).limit(v.limit));
  const after = compiledOnce<PageValues, O>([...uses, 'afterId', 'limit'], (db, v) =>
    rows(db, v).where(id, '>', v.afterId!).orderBy(id).limit(v.limit),
  );
  return async (db: Db, student: Student, selection: SyncSelection): Promise<O[]> => {
    if (!('ids' in selection))
      return (selection.afterId === undefined ? first : after)(db, { ...student, ...selection });
    if (selection.ids.length === 0) return [];
    return rows(db, student)
      .where(id, 'in', [...selection.ids])
      .orderBy(id)
      .execute();
  };
}

const tasks = syncReader('id', ['userId'], (db, v) =>
  db.selectFrom('tasks').select(TASK_COLUMNS).where('user_id', '=', v.userId),
);
const exams = syncReader('id', ['userId'], (db, v) =>
  db.selectFrom('exams').select(EXAM_COLUMNS).where('user_id', '=', v.userId),
);
/** Decks with their cards' counts at `now`, as getDeck answers them. */
const decks = syncReader('d.id', ['userId', 'now'], (db, v) => decksWithSummary(db, v.userId, v.now!));
const cards = syncReader('id', ['userId'], (db, v) =>
  db.selectFrom('flashcard_cards').select(CARD_COLUMNS).where('user_id', '=', v.userId),
);

export const syncedTasks = (db: Db, userId: string, selection: SyncSelection) => tasks(db, { userId }, selection);
export const syncedExams = (db: Db, userId: string, selection: SyncSelection) => exams(db, { userId }, selection);
export const syncedCards = (db: Db, userId: string, selection: SyncSelection) => cards(db, { userId }, selection);
export const syncedDecks = (db: Db, userId: string, selection: SyncSelection, now: Date) =>
  decks(db, { userId, now }, selection);
