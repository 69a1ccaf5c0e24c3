// The AI tutor's reads and writes: conversations and their messages, and the facts about one student that only the
// tutor needs (first name, the exam asked about). The deck asked about, due decks, upcoming exams and open tasks it
// reads through the flashcards' and the daily loop's queries. Every query filters on the user id.
import type { Db } from '../connect.ts';

export type MessageRole = 'user' | 'assistant';
export type FinishReason = 'stop' | 'length' | 'interrupted' | 'error';

const CONVERSATION_COLUMNS = ['id', 'title', 'created_at', 'updated_at'] as const;

export async function findConversation(db: Db, userId: string, conversationId: string) {
  return db
    .selectFrom('ai_conversations')
    .select(CONVERSATION_COLUMNS)
    .where('user_id', '=', userId)
    .where('id', '=', conversationId)
    .executeTakeFirst();
}

/** A page of the student's conversations, the most recently active first; one row more than `limit` tells if more follow. */
export async function listConversations(
  db: Db,
  userId: string,
  after: { at: Date; id: string } | undefined,
  limit: number,
) {
  let query = db.selectFrom('ai_conversations').select(CONVERSATION_COLUMNS).where('user_id', '=', userId);
  if (after) query = query.where((eb) => eb(eb.refTuple('updated_at', 'id'), '<', eb.tuple(after.at, after.id)));
  return query
    .orderBy('updated_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
}

/** Deletes a conversation of the student; its messages go with it (the foreign key cascades). */
export async function deleteConversation(db: Db, userId: string, conversationId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('ai_conversations')
    .where('user_id', '=', userId)
    .where('id', '=', conversationId)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** `id` is chosen by the caller only for a record that must have a known id (the demo student's). */
export async function createConversation(
  db: Db,
  userId: string,
  title: string,
  now: Date,
  id?: string,
): Promise<string> {
  const row = await db
    .insertInto('ai_conversations')
    .values({ ...(id ? { id } : {}), user_id: userId, title, created_at: now, updated_at: now })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/**
 * Marks the conversation active at `now`; false when it no longer exists (deleted meanwhile). Inside a transaction the
 * row stays locked until the commit, so a message inserted after it cannot outlive a concurrent delete.
 */
export async function touchConversation(db: Db, userId: string, conversationId: string, now: Date): Promise<boolean> {
  const result = await db
    .updateTable('ai_conversations')
    .set({ updated_at: now })
    .where('user_id', '=', userId)
    .where('id', '=', conversationId)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export interface NewMessage {
  /** Chosen by the caller for a reply, whose id is announced before it is stored. */
  id?: string;
  user_id: string;
  conversation_id: string;
  role: MessageRole;
  content: string;
  finish_reason: FinishReason | null;
  created_at: Date;
}

export async function insertMessage(db: Db, message: NewMessage): Promise<string> {
  const row = await db.insertInto('ai_messages').values(message).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

/** The last `limit` messages of a conversation, oldest first (the turns a model is shown). */
export async function listRecentMessages(db: Db, userId: string, conversationId: string, limit: number) {
  const rows = await db
    .selectFrom('ai_messages')
    .select(['id', 'role', 'content', 'created_at'])
    .where('user_id', '=', userId)
    .where('conversation_id', '=', conversationId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.reverse().map((row) => ({ ...row, role: row.role as MessageRole }));
}

/** A page of a conversation's messages, oldest first; one row more than `limit` tells if more follow. */
export async function listMessages(
  db: Db,
  userId: string,
  conversationId: string,
  after: { at: Date; id: string } | undefined,
  limit: number,
) {
  let query = db
    .selectFrom('ai_messages')
    .select(['id', 'role', 'content', 'finish_reason', 'created_at'])
    .where('user_id', '=', userId)
    .where('conversation_id', '=', conversationId);
  if (after) query = query.where((eb) => eb(eb.refTuple('created_at', 'id'), '>', eb.tuple(after.at, after.id)));
  return query
    .orderBy('created_at')
    .orderBy('id')
    .limit(limit + 1)
    .execute();
}

export async function findFirstName(db: Db, userId: string): Promise<string | undefined> {
  const row = await db.selectFrom('users').select('first_name').where('id', '=', userId).executeTakeFirst();
  return row?.first_name;
}

/** One exam of the student with the cards due at `now` in its linked decks. */
export async function findExamFocus(db: Db, userId: string, examId: string, now: Date) {
  return db
    .selectFrom('exams as e')
    .leftJoin('exam_decks as l', (join) => join.onRef('l.exam_id', '=', 'e.id').on('l.user_id', '=', userId))
    .leftJoin('flashcard_cards as c', (join) =>
      join.onRef('c.deck_id', '=', 'l.deck_id').on('c.user_id', '=', userId).on('c.next_due_at', '<=', now),
    )
    .where('e.user_id', '=', userId)
    .where('e.id', '=', examId)
    .groupBy(['e.id', 'e.subject', 'e.exam_date'])
    .select((eb) => ['e.id', 'e.subject', 'e.exam_date', eb.fn.count<number>('c.id').as('due')])
    .executeTakeFirst();
}
