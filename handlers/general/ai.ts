// POST /api/ai/chat: the student's message is stored, then the tutor's reply streams as server-sent events and is
// stored once complete. Refusals (404 for another student's conversation, deck or exam) come before the stream,
// as problem+json; after the 200, failures are an `error` event.
import { randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import { createSession } from 'better-sse';
import type { Db } from '../../db/connect.ts';
import {
  createConversation,
  findConversation,
  findExamFocus,
  findFirstName,
  insertMessage,
  listRecentMessages,
  touchConversation,
  type FinishReason,
} from '../../db/queries/ai.ts';
import { listUpcomingExams } from '../../db/queries/exams.ts';
import { findDeck } from '../../db/queries/flashcards.ts';
import { listOpenTasks } from '../../db/queries/tasks.ts';
import { listDueDecks } from '../../db/queries/today.ts';
import type { GeneralPrincipal } from '../../server/general/principal.ts';
import { trackSseStream } from '../../server/metrics.ts';
import { problems } from '../../server/problems.ts';
import { daysBetween, localDate } from './student-day.ts';
import { localTutor } from './tutor/local.ts';
import { cutAtWord } from './tutor/topic.ts';
import { TutorUnavailable, type Focus, type StudentFacts, type Turn, type Tutor, type TutorUsage } from './tutor/types.ts';
import type { GeneralHandlers, Schemas } from './types.ts';

/** Earlier messages of a conversation the tutor is shown (10 exchanges). */
const HISTORY_MESSAGES = 20;
/** Decks, exams and tasks the tutor is told about, each. */
const FACTS_PER_KIND = 3;
const TITLE_CHARS = 80;
const BUILT_IN_TUTOR = localTutor();
const RESTARTING = 'The service is restarting; the reply so far is stored (finish_reason interrupted). Send the request again on a new connection.';

type ChatRequest = Schemas['TutorChatRequest'];

export const streamTutorChat: GeneralHandlers['streamTutorChat'] = async ({ body, principal }, { db, now: clock, lifecycle, tutor = BUILT_IN_TUTOR }, { req, res }) => {
  const userId = principal.user_id;
  const now = clock();
  const conversation = body.conversation_id ? await findConversation(db, userId, body.conversation_id) : undefined;
  if (body.conversation_id && !conversation) throw problems.notFound(`No conversation has id ${body.conversation_id}.`);
  const [facts, history] = await Promise.all([
    studentFacts(db, principal, now, body.context),
    conversation ? listRecentMessages(db, userId, conversation.id, HISTORY_MESSAGES) : [],
  ]);

  const turn = await db.transaction().execute(async (trx) => {
    const conversationId = conversation?.id ?? (await createConversation(trx, userId, titleOf(body.message), now));
    if (conversation) await touchConversation(trx, userId, conversation.id, now);
    const userMessageId = await insertMessage(trx, { user_id: userId, conversation_id: conversationId, role: 'user', content: body.message, finish_reason: null, created_at: now });
    return { conversationId, userMessageId };
  });

  await relayReply({ req, res, db, clock, tutor, streamsEnd: lifecycle.streamsEnd, userId, ...turn, message: body.message, history: history.map(({ role, content }) => ({ role, content })), facts });
};

interface Relay {
  req: Request;
  res: Response;
  db: Db;
  clock: () => Date;
  tutor: Tutor;
  /** Aborted when the process stops: the reply ends early and the client is told to retry. */
  streamsEnd: AbortSignal;
  userId: string;
  conversationId: string;
  userMessageId: string;
  message: string;
  history: Turn[];
  facts: StudentFacts;
}

/**
 * Streams the tutor's reply and stores it. A client that disconnects aborts the tutor; what was streamed until then
 * is stored with finish_reason 'interrupted' (nothing when no text came yet), so the conversation shows what the
 * student saw. A stop of the process does the same, and ends the stream with an `error` event that says to retry.
 * A provider failure stores the partial text as 'error' and ends the stream with an `error` event.
 */
async function relayReply(r: Relay): Promise<void> {
  const { req, res } = r;
  const replyId = randomUUID();
  const abort = new AbortController();
  // The response's 'close', not the request's: on Node 20 a POST's request emits 'close' as soon as its body
  // has been read, long before the client goes away.
  const onClose = () => {
    if (!res.writableFinished) abort.abort();
  };
  res.on('close', onClose);
  const session = await createSession(req, res, { retry: null });
  trackSseStream(res);
  let sequence = 0;
  const send = (event: string, data: object) => {
    if (session.isConnected && !abort.signal.aborted) session.push(data, event, String(++sequence));
  };

  const stopped = AbortSignal.any([abort.signal, r.streamsEnd]);
  let text = '';
  let finish: { finish_reason: 'stop' | 'length'; usage: TutorUsage } | undefined;
  let failure: unknown;
  try {
    send('message.started', { conversation_id: r.conversationId, message_id: replyId, user_message_id: r.userMessageId, model: r.tutor.model });
    for await (const event of r.tutor.reply({ message: r.message, history: r.history, facts: r.facts, signal: stopped })) {
      if (stopped.aborted) break;
      if (event.type === 'delta') {
        text += event.text;
        send('message.delta', { text: event.text });
      } else {
        finish = event;
      }
    }
  } catch (error) {
    failure = error;
  }

  const reason: FinishReason = finish ? finish.finish_reason : stopped.aborted ? 'interrupted' : 'error';
  try {
    if (finish || text) await storeReply(r, replyId, text, reason);
    if (finish) send('message.completed', { message_id: replyId, finish_reason: finish.finish_reason, usage: finish.usage });
    else if (r.streamsEnd.aborted) send('error', { code: 'service_restarting', detail: RESTARTING });
    else if (!abort.signal.aborted) throw failure ?? new TutorUnavailable('The tutor ended without finishing its reply.');
  } catch (error) {
    const unavailable = error instanceof TutorUnavailable;
    if (!unavailable) req.log.error({ err: error }, 'the tutor chat failed after its stream started');
    send('error', unavailable ? { code: 'tutor_unavailable', detail: error.message } : { code: 'internal_error', detail: problems.internal().detail });
  } finally {
    res.off('close', onClose);
    res.end();
  }
}

async function storeReply(r: Relay, id: string, content: string, finishReason: FinishReason): Promise<void> {
  const now = r.clock();
  await r.db.transaction().execute(async (trx) => {
    await insertMessage(trx, { id, user_id: r.userId, conversation_id: r.conversationId, role: 'assistant', content, finish_reason: finishReason, created_at: now });
    await touchConversation(trx, r.userId, r.conversationId, now);
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
