// A tutor conversation's bookkeeping, apart from how its reply reaches the client: the earlier turns the tutor is
// shown, the student's message that opens or continues a conversation, and the reply stored however its stream
// ended. Each write is its own transaction that checks the conversation still exists, because a student may delete
// it from another request while a reply is queued or streaming.
import type { Db } from '../../db/connect.ts';
import {
  createConversation,
  insertMessage,
  listRecentMessages,
  touchConversation,
  type FinishReason,
} from '../../db/queries/ai.ts';
import { recentTurns } from './tutor/history.ts';
import { cutAtWord } from './tutor/topic.ts';
import type { Turn } from './tutor/types.ts';

/** Earlier messages of a conversation the tutor is shown (10 exchanges), within HISTORY_CHARS (tutor/history.ts). */
const HISTORY_MESSAGES = 20;
const TITLE_CHARS = 80;

/** The conversation's latest turns, oldest first, as many as the tutor is shown. */
export async function conversationHistory(db: Db, userId: string, conversationId: string): Promise<Turn[]> {
  const messages = await listRecentMessages(db, userId, conversationId, HISTORY_MESSAGES);
  return recentTurns(messages.map(({ role, content }) => ({ role, content })));
}

/**
 * Stores the student's message, in a new conversation unless it continues one; undefined when the conversation it
 * continues was deleted since it was looked up (nothing is stored).
 */
export async function storeStudentMessage(
  db: Db,
  userId: string,
  conversationId: string | undefined,
  message: string,
  now: Date,
): Promise<{ conversationId: string; userMessageId: string } | undefined> {
  return db.transaction().execute(async (trx) => {
    if (conversationId && !(await touchConversation(trx, userId, conversationId, now))) return undefined;
    const id = conversationId ?? (await createConversation(trx, userId, titleOf(message), now));
    const userMessageId = await insertMessage(trx, {
      user_id: userId,
      conversation_id: id,
      role: 'user',
      content: message,
      finish_reason: null,
      created_at: now,
    });
    return { conversationId: id, userMessageId };
  });
}

/** Stores a reply under the id its stream announced, unless its conversation was deleted while it streamed (false). */
export async function storeReply(
  db: Db,
  userId: string,
  conversationId: string,
  reply: { id: string; content: string; finishReason: FinishReason },
  now: Date,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    if (!(await touchConversation(trx, userId, conversationId, now))) return false;
    await insertMessage(trx, {
      id: reply.id,
      user_id: userId,
      conversation_id: conversationId,
      role: 'assistant',
      content: reply.content,
      finish_reason: reply.finishReason,
      created_at: now,
    });
    return true;
  });
}

/** A new conversation is named after its first message: its first line, cut at a word. */
function titleOf(message: string): string {
  return cutAtWord(message.trim().split('\n')[0]!.trim(), TITLE_CHARS);
}
