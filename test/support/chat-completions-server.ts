// A real HTTP server that speaks OpenAI's streaming chat-completions API, for testing the OpenAI-compatible tutor
// without the network: it records each request and answers in one of a few ways, chunk by chunk.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Behaviour =
  | {
      kind: 'reply';
      pieces: string[];
      finish_reason?: string;
      usage?: { prompt_tokens: number; completion_tokens: number };
    }
  /** Sends a piece every `everyMs` until the client goes away. */
  | { kind: 'endless'; everyMs: number }
  | { kind: 'status'; status: number };

export interface RecordedRequest {
  path: string;
  headers: IncomingMessage['headers'];
  body: { model: string; stream: boolean; max_tokens?: number; messages: Array<{ role: string; content: string }> };
  /** Resolves when the client closed the connection before the reply ended, or when the reply ended. */
  ended: Promise<'client_closed' | 'finished'>;
}

export interface ChatCompletionsServer {
  baseUrl: string;
  requests: RecordedRequest[];
  behave(next: Behaviour): void;
  close(): Promise<void>;
}

export async function startChatCompletionsServer(): Promise<ChatCompletionsServer> {
  const requests: RecordedRequest[] = [];
  let behaviour: Behaviour = { kind: 'reply', pieces: ['Hello.'] };
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => (raw += chunk));
    req.on('end', () => {
      let settle!: (how: 'client_closed' | 'finished') => void;
      const ended = new Promise<'client_closed' | 'finished'>((resolve) => (settle = resolve));
      res.on('close', () => settle(res.writableFinished ? 'finished' : 'client_closed'));
      requests.push({ path: req.url ?? '', headers: req.headers, body: JSON.parse(raw), ended });
      const current = behaviour;
      if (current.kind === 'status') {
        res
          .writeHead(current.status, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: 'upstream says no' } }));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const chunk = (delta: object, finish_reason: string | null = null, usage: object | null = null) =>
        res.write(
          `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', model: 'test-model', choices: usage ? [] : [{ index: 0, delta, finish_reason }], usage })}\n\n`,
        );
      if (current.kind === 'reply') {
        chunk({ role: 'assistant', content: '' });
        for (const piece of current.pieces) chunk({ content: piece });
        chunk({}, current.finish_reason ?? 'stop');
        if (current.usage) chunk({}, null, current.usage);
        res.end('data: [DONE]\n\n');
        return;
      }
      let n = 0;
      const timer = setInterval(() => chunk({ content: `piece ${++n}. ` }), current.everyMs);
      res.on('close', () => clearInterval(timer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    behave: (next) => (behaviour = next),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
