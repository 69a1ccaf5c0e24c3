// The server-sent event stream of POST /api/ai/chat: opening it, waiting in the AI queue with `queued` events, and
// relaying the tutor's reply while storing it. Every event carries an id (1, 2, 3, … within the stream) so a client
// can tell how far it got; a POST cannot be resumed, so the client reads the conversation back instead.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createSession } from 'better-sse';
import type { Slot, Waiting } from '../../services/ai/queue.ts';
import { EVENT_STREAM_HEADERS } from '../../server/http/event-stream-headers.ts';
import { trackSseStream } from '../../server/process/metrics.ts';
import { problems } from '../../server/http/problems.ts';
import type { FinishReason } from '../../db/queries/ai.ts';
import {
  TutorUnavailable,
  type StudentFacts,
  type Turn,
  type Tutor,
  type TutorUsage,
} from '../../services/ai/tutor/types.ts';

/**
 * The most of a reply that is streamed and stored, whatever the model does with its token limit
 * (openai-compatible.ts REPLY_MAX_TOKENS): a reply is held in memory while it streams, stored whole and sent back to
 * the model as history, so its size is bounded here. A longer reply ends at this length as `length`.
 */
export const MAX_REPLY_CHARS = 16_000;

const RESTARTING =
  'The service is restarting; the reply so far is stored (finish_reason interrupted). Send the request again on a new connection.';
const RESTARTING_WHILE_QUEUED =
  'The service is restarting; nothing was stored. Send the request again on a new connection.';
const DELETED = 'The conversation was deleted while the reply streamed; the reply was not stored.';

/** Aborts when the client goes away. The response's 'close', not the request's: on Node 20 a POST's request emits
 * 'close' as soon as its body has been read, long before the client goes away. */
export function clientDisconnect(res: ServerResponse): { signal: AbortSignal; dispose(): void } {
  const abort = new AbortController();
  const onClose = () => {
    if (!res.writableFinished) abort.abort();
  };
  res.on('close', onClose);
  return { signal: abort.signal, dispose: () => res.off('close', onClose) };
}

export interface ReplyStream {
  send(event: string, data: object): void;
  /** Ends the stream with an `error` event: `tutor_unavailable` for the provider, else `internal_error` (logged). */
  fail(error: unknown): void;
  end(): void;
}

/** Starts the 200 event stream; events are dropped once the client is gone. */
export async function openReplyStream(
  req: IncomingMessage,
  res: ServerResponse,
  clientGone: AbortSignal,
): Promise<ReplyStream> {
  const session = await createSession(req, res, { retry: null, headers: EVENT_STREAM_HEADERS });
  trackSseStream(res);
  let sequence = 0;
  const send = (event: string, data: object) => {
    if (session.isConnected && !clientGone.aborted) session.push(data, event, String(++sequence));
  };
  return {
    send,
    fail(error) {
      const unavailable = error instanceof TutorUnavailable;
      if (!unavailable) req.log.error({ err: error }, 'the tutor chat failed after its stream started');
      send(
        'error',
        unavailable
          ? { code: 'tutor_unavailable', detail: error.message }
          : { code: 'internal_error', detail: problems.internal().detail },
      );
    },
    end: () => res.end(),
  };
}

/**
 * Tells the client its place (`queued`) now and whenever it moves, until a slot is free. Undefined when the wait
 * ended first: the client left (nothing more to send) or the server is stopping (an `error` event asks for a retry).
 */
export async function waitForSlot(
  waiting: Waiting,
  stream: ReplyStream,
  streamsEnd: AbortSignal,
): Promise<Slot | undefined> {
  stream.send('queued', { position: waiting.position });
  waiting.onMove((position) => stream.send('queued', { position }));
  try {
    return await waiting.granted;
  } catch {
    if (streamsEnd.aborted) stream.send('error', { code: 'service_restarting', detail: RESTARTING_WHILE_QUEUED });
    return undefined;
  }
}

export interface Reply {
  tutor: Tutor;
  conversationId: string;
  userMessageId: string;
  message: string;
  history: Turn[];
  facts: StudentFacts;
  /** Aborted when the client disconnects. */
  clientGone: AbortSignal;
  /** Aborted when the process stops: the reply ends early and the client is told to retry. */
  streamsEnd: AbortSignal;
  /** Stores the reply as streamed, under the id announced in `message.started`; false when its conversation is gone. */
  store(id: string, content: string, finishReason: FinishReason): Promise<boolean>;
}

/**
 * Streams the tutor's reply and stores it. A client that disconnects aborts the tutor; what was streamed until then
 * is stored with finish_reason 'interrupted' (nothing when no text came yet), so the conversation shows what the
 * student saw. A stop of the process does the same, and ends the stream with an `error` event that says to retry.
 * A provider failure stores the partial text as 'error' and ends the stream with an `error` event. A conversation
 * deleted while its reply streamed stores nothing, and the stream ends with an `error` event that says so rather
 * than a `message.completed` that points at a message no one can read.
 */
export async function relayReply(stream: ReplyStream, r: Reply): Promise<void> {
  const replyId = randomUUID();
  const stopped = AbortSignal.any([r.clientGone, r.streamsEnd]);
  const tooLong = new AbortController();
  let text = '';
  let finish: { finish_reason: 'stop' | 'length'; usage: TutorUsage } | undefined;
  let failure: unknown;
  try {
    stream.send('message.started', {
      conversation_id: r.conversationId,
      message_id: replyId,
      user_message_id: r.userMessageId,
      model: r.tutor.model,
    });
    const signal = AbortSignal.any([stopped, tooLong.signal]);
    for await (const event of r.tutor.reply({ message: r.message, history: r.history, facts: r.facts, signal })) {
      if (stopped.aborted) break;
      if (event.type === 'finish') {
        finish = event;
        continue;
      }
      const piece = event.text.slice(0, MAX_REPLY_CHARS - text.length);
      text += piece;
      if (piece) stream.send('message.delta', { text: piece });
      if (text.length >= MAX_REPLY_CHARS) {
        finish = { finish_reason: 'length', usage: { input_tokens: null, output_tokens: null } };
        tooLong.abort();
        break;
      }
    }
  } catch (error) {
    failure = error;
  }

  const reason: FinishReason = finish ? finish.finish_reason : stopped.aborted ? 'interrupted' : 'error';
  try {
    const stored = finish || text ? await r.store(replyId, text, reason) : true;
    if (!stored) stream.send('error', { code: 'conversation_deleted', detail: DELETED });
    else if (finish)
      stream.send('message.completed', {
        message_id: replyId,
        finish_reason: finish.finish_reason,
        usage: finish.usage,
      });
    else if (r.streamsEnd.aborted) stream.send('error', { code: 'service_restarting', detail: RESTARTING });
    else if (!r.clientGone.aborted)
      throw failure ?? new TutorUnavailable('The tutor ended without finishing its reply.');
  } catch (error) {
    stream.fail(error);
  }
}
