// A tutor backed by any service that speaks OpenAI's streaming chat-completions API (POST {base}/chat/completions
// with `stream: true`, answered by server-sent events of `chat.completion.chunk` objects and a final `[DONE]`).
import { EventSourceParserStream } from 'eventsource-parser/stream';
import { systemPrompt } from './prompt.ts';
import { TutorUnavailable, type Tutor, type TutorEvent, type TutorRequest, type TutorUsage } from './types.ts';

export interface OpenAiCompatibleOptions {
  /** The API base, e.g. https://api.openai.com/v1 (`/chat/completions` is appended). */
  baseUrl: string;
  apiKey: string;
  model: string;
  /** The longest a whole reply may take before the stream ends with `tutor_unavailable`. */
  timeoutMs?: number;
}

/**
 * Tokens a reply may use (`max_tokens`, the parameter every OpenAI-compatible server knows): a tutor answers briefly,
 * and a student's request must not cost an unbounded generation. About 8,000 characters of English.
 */
export const REPLY_MAX_TOKENS = 2_000;

interface CompletionChunk {
  choices?: Array<{ delta?: { content?: string | null }; finish_reason?: string | null }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
}

export function openAiCompatibleTutor(options: OpenAiCompatibleOptions): Tutor {
  const endpoint = `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  const timeoutMs = options.timeoutMs ?? 60_000;
  return {
    model: options.model,
    async *reply({ message, history, facts, signal }: TutorRequest): AsyncGenerator<TutorEvent> {
      const messages = [
        { role: 'system', content: systemPrompt(facts) },
        ...history,
        { role: 'user', content: message },
      ];
      let response: Response;
      try {
        response = await fetch(endpoint, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'text/event-stream',
            authorization: `Bearer ${options.apiKey}`,
          },
          body: JSON.stringify({
            model: options.model,
            messages,
            max_tokens: REPLY_MAX_TOKENS,
            stream: true,
            stream_options: { include_usage: true },
          }),
          signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
        });
      } catch (error) {
        if (signal.aborted) return;
        throw new TutorUnavailable(`The model provider could not be reached (${(error as Error).name}).`);
      }
      if (!response.ok || !response.body) {
        await response.body?.cancel();
        throw new TutorUnavailable(`The model provider answered ${response.status}.`);
      }

      let finishReason: 'stop' | 'length' | undefined;
      const usage: TutorUsage = { input_tokens: null, output_tokens: null };
      const events = response.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
      try {
        for await (const event of events) {
          if (event.data === '[DONE]') break;
          const chunk = parseChunk(event.data);
          const choice = chunk.choices?.[0];
          if (choice?.delta?.content) yield { type: 'delta', text: choice.delta.content };
          if (choice?.finish_reason) finishReason = choice.finish_reason === 'length' ? 'length' : 'stop';
          if (chunk.usage) {
            usage.input_tokens = chunk.usage.prompt_tokens ?? null;
            usage.output_tokens = chunk.usage.completion_tokens ?? null;
          }
        }
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof TutorUnavailable) throw error;
        throw new TutorUnavailable(`The model provider's stream failed (${(error as Error).name}).`);
      }
      if (signal.aborted) return;
      if (!finishReason)
        throw new TutorUnavailable('The model provider ended the stream before the reply was complete.');
      yield { type: 'finish', finish_reason: finishReason, usage };
    },
  };
}

function parseChunk(data: string): CompletionChunk {
  try {
    return JSON.parse(data) as CompletionChunk;
  } catch {
    throw new TutorUnavailable('The model provider sent a chunk that is not JSON.');
  }
}
