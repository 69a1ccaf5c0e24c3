// The AI tutor's operations. POST /api/ai/chat: the tutor's reply streams as server-sent events, after a wait in the
// process's AI queue when every generation slot is busy, and is stored however it ends. Refusals (404 for another
// student's conversation, deck or exam; 503 when the queue is full) come before the stream, as problem+json; after
// the 200, failures are an `error` event. An account has a few places for replies in flight (REPLIES_IN_FLIGHT, one
// per conversation); a request beyond them is a 429 before anything is read or stored. The conversations are read
// back (a reply whose stream dropped included) and deleted through /api/ai/conversations.
import type { Db } from '../../db/connect.ts';
import {
  createConversation,
  deleteConversation as deleteConversationRow,
  findConversation,
  findExamFocus,
  findFirstName,
  insertMessage,
  listConversations as listConversationRows,
  listMessages,
  listRecentMessages,
  touchConversation,
  type FinishReason,
} from '../../db/queries/ai.ts';
import { listUpcomingExams } from '../../db/queries/exams.ts';
import { findDeck } from '../../db/queries/flashcards.ts';
import { listOpenTasks } from '../../db/queries/tasks.ts';
import { listDueDecks } from '../../db/queries/today.ts';
import { REPLY_RETRY_AFTER_SECONDS, type Reservation, type Slot } from '../../services/ai/queue.ts';
import type { GeneralPrincipal } from '../../server/auth/principal.ts';
import { problems } from '../../server/http/problems.ts';
import { page, timeIdCursor } from '../../server/http/cursor.ts';
import { daysBetween, localDate } from '../../domain/student-day.ts';
import { recentTurns } from '../../services/ai/tutor/history.ts';
import { clientDisconnect, openReplyStream, relayReply, waitForSlot, type ReplyStream } from './ai-reply-stream.ts';
import { cutAtWord } from '../../services/ai/tutor/topic.ts';
import type { Focus, StudentFacts } from '../../services/ai/tutor/types.ts';
import type { GeneralHandlers, Schemas } from './types.ts';

/** Earlier messages of a conversation the tutor is shown (10 exchanges), within HISTORY_CHARS (tutor/history.ts). */
const HISTORY_MESSAGES = 20;
/** Decks, exams and tasks the tutor is told about, each. */
const FACTS_PER_KIND = 3;
const TITLE_CHARS = 80;

type ChatRequest = Schemas['TutorChatRequest'];

type ChatArguments = Parameters<GeneralHandlers['streamTutorChat']>;

export const streamTutorChat: GeneralHandlers['streamTutorChat'] = async (input, context, io) => {
  const { aiQueue } = context;
  // The account's place comes first, before any read: a refused request costs one count and stores nothing.
  const reservation = await aiQueue.reserve({ account: input.principal.user_id, plan: input.principal.plan, conversation: input.body.conversation_id });
  if (reservation.kind === 'refused') throw tooManyReplies(reservation);
  try {
    await queueAndReply(input, context, io);
  } finally {
    reservation.lease.release();
  }
};

/** Waits for a generation slot (telling the client its place), then streams the reply and stores both messages. */
async function queueAndReply(
  { body, principal }: ChatArguments[0],
  { db, now: clock, lifecycle, tutor, aiQueue }: ChatArguments[1],
  { req, res }: ChatArguments[2],
): Promise<void> {
  const userId = principal.user_id;
  const conversation = body.conversation_id ? await findConversation(db, userId, body.conversation_id) : undefined;
  if (body.conversation_id && !conversation) throw noConversation();
  const [facts, history] = await Promise.all([
    studentFacts(db, principal, clock(), body.context),
    conversation ? listRecentMessages(db, userId, conversation.id, HISTORY_MESSAGES) : [],
  ]);

  const client = clientDisconnect(res);
  const admission = aiQueue.admit(principal.plan === 'contract', AbortSignal.any([client.signal, lifecycle.streamsEnd]));
  let slot: Slot | undefined = admission.kind === 'started' ? admission.slot : undefined;
  let stream: ReplyStream | undefined;
  try {
    if (admission.kind === 'full') {
      throw problems.serviceUnavailable(`The AI tutor is busy: every generation slot is taken and ${aiQueue.waiting} requests are waiting.`);
    }
    if (admission.kind === 'queued') {
      stream = await openReplyStream(req, res, client.signal);
      slot = await waitForSlot(admission.waiting, stream, lifecycle.streamsEnd);
      if (!slot) return;
    }
    // The student's message is stored once the reply can start: a request that never left the queue left nothing.
    // Started at once, that is before the stream, so a database failure is still a 503 problem.
    let turn: Awaited<ReturnType<typeof storeTurn>>;
    try {
      turn = await storeTurn(db, userId, conversation?.id, body.message, clock());
    } catch (error) {
      if (!stream) throw error;
      stream.fail(error);
      return;
    }
    stream ??= await openReplyStream(req, res, client.signal);
    await relayReply(stream, {
      tutor,
      ...turn,
      message: body.message,
      history: recentTurns(history.map(({ role, content }) => ({ role, content }))),
      facts,
      clientGone: client.signal,
      streamsEnd: lifecycle.streamsEnd,
      store: (id, content, finishReason) => storeReply(db, userId, turn.conversationId, id, content, finishReason, clock()),
    });
  } finally {
    slot?.release();
    client.dispose();
    stream?.end();
  }
}

function tooManyReplies(refusal: Extract<Reservation, { kind: 'refused' }>) {
  const detail =
    refusal.reason === 'conversation'
      ? 'This conversation already has a reply queued or generating; wait for it to end before sending the next message.'
      : `You already have ${refusal.limit} replies queued or generating, the most your plan allows at once; wait for one to end.`;
  return problems.tooManyConcurrentReplies(detail, REPLY_RETRY_AFTER_SECONDS);
}

export const listConversations: GeneralHandlers['listConversations'] = async ({ query, principal }, { db }) => {
  const rows = await listConversationRows(db, principal.user_id, timeIdCursor(query.cursor), query.limit);
  const result = page(rows, query.limit, (row) => [row.updated_at.toISOString(), row.id]);
  return { status: 200, body: { ...result, data: result.data.map(conversationBody) } };
};

export const getConversation: GeneralHandlers['getConversation'] = async ({ path, query, principal }, { db }) => {
  const conversation = await findConversation(db, principal.user_id, path.conversation_id);
  if (!conversation) throw noConversation();
  const rows = await listMessages(db, principal.user_id, conversation.id, timeIdCursor(query.cursor), query.limit);
  const messages = page(rows, query.limit, (row) => [row.created_at.toISOString(), row.id]);
  return { status: 200, body: { ...conversationBody(conversation), messages: { ...messages, data: messages.data.map(messageBody) } } };
};

export const deleteConversation: GeneralHandlers['deleteConversation'] = async ({ path, principal }, { db }) => {
  if (!(await deleteConversationRow(db, principal.user_id, path.conversation_id))) throw noConversation();
  return { status: 204, body: undefined };
};

function noConversation() {
  return problems.notFound('You have no conversation with this id.');
}

function conversationBody(row: { id: string; title: string; created_at: Date; updated_at: Date }): Schemas['Conversation'] {
  return { id: row.id, title: row.title, created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString() };
}

function messageBody(row: Awaited<ReturnType<typeof listMessages>>[number]): Schemas['ConversationMessage'] {
  return {
    id: row.id,
    role: row.role as Schemas['ConversationMessage']['role'],
    content: row.content,
    finish_reason: row.finish_reason as Schemas['ConversationMessage']['finish_reason'],
    created_at: row.created_at.toISOString(),
  };
}

/** Stores the student's message, in a new conversation unless it continues one. */
async function storeTurn(db: Db, userId: string, conversationId: string | undefined, message: string, now: Date) {
  return db.transaction().execute(async (trx) => {
    const id = conversationId ?? (await createConversation(trx, userId, titleOf(message), now));
    // Deleted since it was looked up: the same 404 as before.
    if (conversationId && !(await touchConversation(trx, userId, conversationId, now))) throw noConversation();
    const userMessageId = await insertMessage(trx, { user_id: userId, conversation_id: id, role: 'user', content: message, finish_reason: null, created_at: now });
    return { conversationId: id, userMessageId };
  });
}

/** Stores a reply, unless its conversation was deleted while it streamed (false). */
async function storeReply(db: Db, userId: string, conversationId: string, id: string, content: string, finishReason: FinishReason, now: Date): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    if (!(await touchConversation(trx, userId, conversationId, now))) return false;
    await insertMessage(trx, { id, user_id: userId, conversation_id: conversationId, role: 'assistant', content, finish_reason: finishReason, created_at: now });
    return true;
  });
}

/** The student's situation now, from their own data; `context` narrows it to one deck or exam (404 if not theirs). */
async function studentFacts(db: Db, principal: GeneralPrincipal, now: Date, context: ChatRequest['context']): Promise<StudentFacts> {
  const userId = principal.user_id;
  const zone = principal.time_zone;
  const today = localDate(now, zone);
  const [firstName, dueDecks, exams, tasks, focus] = await Promise.all([
    findFirstName(db, userId),
    listDueDecks(db, userId, now, now).then(mostDueFirst),
    listUpcomingExams(db, userId, today, FACTS_PER_KIND),
    listOpenTasks(db, userId, { limit: FACTS_PER_KIND }),
    focusOf(db, userId, now, today, context),
  ]);
  if (firstName === undefined) throw problems.notFound('This account no longer exists.');
  return {
    first_name: firstName,
    now,
    time_zone: zone,
    due_decks: dueDecks,
    exams: exams.map((exam) => ({ ...exam, days_left: daysBetween(today, exam.exam_date) })),
    tasks,
    focus,
  };
}

/** The decks with the most cards due (reviews and new cards alike), ties by title then id. */
function mostDueFirst(decks: Awaited<ReturnType<typeof listDueDecks>>) {
  return decks
    .map(({ id, title, due_reviews, due_new }) => ({ id, title, due: due_reviews + due_new }))
    .sort((a, b) => b.due - a.due || a.title.localeCompare(b.title) || a.id.localeCompare(b.id))
    .slice(0, FACTS_PER_KIND);
}

async function focusOf(db: Db, userId: string, now: Date, today: string, context: ChatRequest['context']): Promise<Focus | null> {
  if (context?.deck_id) {
    const deck = await findDeck(db, userId, context.deck_id, now);
    if (!deck) throw problems.notFound(`No deck has id ${context.deck_id}.`);
    return { kind: 'deck', id: deck.id, title: deck.title, cards: deck.card_count, due: deck.due_count };
  }
  if (context?.exam_id) {
    const exam = await findExamFocus(db, userId, context.exam_id, now);
    if (!exam) throw problems.notFound(`No exam has id ${context.exam_id}.`);
    return { kind: 'exam', ...exam, days_left: daysBetween(today, exam.exam_date) };
  }
  return null;
}

/** A new conversation is named after its first message: its first line, cut at a word. */
function titleOf(message: string): string {
  return cutAtWord(message.trim().split('\n')[0]!.trim(), TITLE_CHARS);
}
