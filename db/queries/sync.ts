// The sync's reads (services/sync/pull.ts): a student's tasks, decks, cards or exams, either a page in id order for a
// full sync (a key that never moves, unlike a due date, so a page resumed in a later snapshot skips nothing) or the
// objects a change since a token names. Each with the columns its REST operation answers with. A page is a named
// prepared statement (db/prepared-statements.ts): a large account's full sync is many of them, each planned once per
// connection instead of on every page; the rows of ids, whose text varies with their number, are not.
import type { Db } from '../connect.ts';
import { executePrepared } from '../prepared-statements.ts';
import { EXAM_COLUMNS } from './exams.ts';
import { CARD_COLUMNS, decksWithSummary } from './flashcards.ts';
import { TASK_COLUMNS } from './tasks.ts';

/** A page after `afterId` (from the first when absent), or the rows of `ids` (those that still exist). */
export type SyncSelection = { afterId: string | undefined; limit: number } | { ids: readonly string[] };

export async function syncedTasks(db: Db, userId: string, selection: SyncSelection) {
  const query = db.selectFrom('tasks').select(TASK_COLUMNS).where('user_id', '=', userId).orderBy('id');
  if ('ids' in selection) return selection.ids.length ? query.where('id', 'in', [...selection.ids]).execute() : [];
  const { afterId, limit } = selection;
  return executePrepared(db, (afterId ? query.where('id', '>', afterId) : query).limit(limit));
}

export async function syncedExams(db: Db, userId: string, selection: SyncSelection) {
  const query = db.selectFrom('exams').select(EXAM_COLUMNS).where('user_id', '=', userId).orderBy('id');
  if ('ids' in selection) return selection.ids.length ? query.where('id', 'in', [...selection.ids]).execute() : [];
  const { afterId, limit } = selection;
  return executePrepared(db, (afterId ? query.where('id', '>', afterId) : query).limit(limit));
}

/** Decks with their cards' counts at `now`, as getDeck answers them. */
export async function syncedDecks(db: Db, userId: string, selection: SyncSelection, now: Date) {
  const query = decksWithSummary(db, userId, now).orderBy('d.id');
  if ('ids' in selection) return selection.ids.length ? query.where('d.id', 'in', [...selection.ids]).execute() : [];
  const { afterId, limit } = selection;
  return executePrepared(db, (afterId ? query.where('d.id', '>', afterId) : query).limit(limit));
}

export async function syncedCards(db: Db, userId: string, selection: SyncSelection) {
  const query = db.selectFrom('flashcard_cards').select(CARD_COLUMNS).where('user_id', '=', userId).orderBy('id');
  if ('ids' in selection) return selection.ids.length ? query.where('id', 'in', [...selection.ids]).execute() : [];
  const { afterId, limit } = selection;
  return executePrepared(db, (afterId ? query.where('id', '>', afterId) : query).limit(limit));
}
