// The AI tutor's operations. POST /api/ai/chat: the tutor's reply streams as server-sent events, after a wait in the
// process's AI queue when every generation slot is busy, and is stored however it ends. Refusals (404 for another
// student's conversation, deck or exam; 503 when the queue is full) come before the stream, as problem+json; after
// the 200, failures are an `error` event. An account has a few places for replies in flight (REPLIES_IN_FLIGHT, one
// per conversation); a request beyond them is a 429 before anything is read or stored. The conversations are read
// back (a reply whose stream dropped included) and deleted through /api/ai/conversations.
import {
  deleteConversation as deleteConversationRow,
  findConversation,
  listConversations as listConversationRows,
  listMessages,
} from '../../db/queries/ai.ts';
import { conversationHistory, storeReply, storeStudentMessage } from '../../services/ai/conversation.ts';
import type { Slot } from '../../services/ai/queue.ts';
import { REPLY_RETRY_AFTER_SECONDS, reserveReply, type Reservation } from '../../services/ai/reply-places.ts';
import { tutorFacts } from '../../services/ai/tutor-facts.ts';
import { problems } from '../../server/http/problems.ts';
import { page, timeIdCursor } from '../../server/contract/cursor.ts';
import { clientDisconnect, openReplyStream, relayReply, waitForSlot, type ReplyStream } from './ai-reply-stream.ts';
import type { GeneralHandlers, Schemas } from './types.ts';

type ChatArguments = Parameters<GeneralHandlers['streamTutorChat']>;

export const streamTutorChat: GeneralHandlers['streamTutorChat'] = async (input, context, io) => {
  // The account's place comes first, before any read: a refused request costs one count and stores nothing.
  const reservation = await reserveReply(context.leases, {
    account: input.principal.user_id,
    plan: input.principal.plan,
    conversation: input.body.conversation_id,
  });
  if (reservation.kind === 'refused') throw tooManyReplies(reservation);
  const { lease } = reservation;
  try {
    await queueAndReply(input, context, io, () => lease.release());
  } finally {
    await lease.release();
  }
};

/**
 * Waits for a generation slot (telling the client its place), then streams the reply and stores both messages.
 * `freePlace` gives the account's place back before the stream ends, so that a next message sent once the client
 * sees the end finds it free.
 */
async function queueAndReply(
  { body, principal }: ChatArguments[0],
  { db, now: clock, lifecycle, tutor, aiQueue }: ChatArguments[1],
  { req, res }: ChatArguments[2],
  freePlace: () => Promise<void>,
): Promise<void> {
  const userId = principal.user_id;
  const conversation = body.conversation_id ? await findConversation(db, userId, body.conversation_id) : undefined;
  if (body.conversation_id && !conversation) throw noConversation();
  const [facts, history] = await Promise.all([
    tutorFacts(db, principal, clock(), body.context),
    conversation ? conversationHistory(db, userId, conversation.id) : [],
  ]);

  const client = clientDisconnect(res);
  const admission = aiQueue.admit(
    principal.plan === 'contract',
    AbortSignal.any([client.signal, lifecycle.streamsEnd]),
  );
  let slot: Slot | undefined = admission.kind === 'started' ? admission.slot : undefined;
  let stream: ReplyStream | undefined;
  try {
    if (admission.kind === 'full') {
      throw problems.serviceUnavailable(
        `The AI tutor is busy: every generation slot is taken and ${aiQueue.waiting} requests are waiting.`,
      );
    }
    if (admission.kind === 'queued') {
      stream = await openReplyStream(req, res, client.signal);
      slot = await waitForSlot(admission.waiting, stream, lifecycle.streamsEnd);
      if (!slot) return;
    }
    // The student's message is stored once the reply can start: a request that never left the queue left nothing.
    // Started at once, that is before the stream, so a database failure is still a 503 problem.
    let turn: { conversationId: string; userMessageId: string };
    try {
      const stored = await storeStudentMessage(db, userId, conversation?.id, body.message, clock());
      // Deleted since it was looked up: the same 404 as before.
      if (!stored) throw noConversation();
      turn = stored;
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
      history,
      facts,
      clientGone: client.signal,
      streamsEnd: lifecycle.streamsEnd,
      store: (id, content, finishReason) =>
        storeReply(db, userId, turn.conversationId, { id, content, finishReason }, clock()),
    });
  } finally {
    slot?.release();
    client.dispose();
    await freePlace();
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
  return {
    status: 200,
    body: { ...conversationBody(conversation), messages: { ...messages, data: messages.data.map(messageBody) } },
  };
};

export const deleteConversation: GeneralHandlers['deleteConversation'] = async ({ path, principal }, { db }) => {
  if (!(await deleteConversationRow(db, principal.user_id, path.conversation_id))) throw noConversation();
  return { status: 204, body: undefined };
};

function noConversation() {
  return problems.notFound('You have no conversation with this id.');
}

function conversationBody(row: {
  id: string;
  title: string;
  created_at: Date;
  updated_at: Date;
}): Schemas['Conversation'] {
  return {
    id: row.id,
    title: row.title,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
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
