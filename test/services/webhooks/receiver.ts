// A webhook receiver on loopback for tests (and the fault tests' child processes): answers each request as its script
// says (a status, 'hang' to answer only when the test releases it, or 'trickle': a 200 whose body never ends, a byte at a time), verifies every
// delivery's signature with the `standardwebhooks` library as a real receiver would, and keeps what it got.
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export type Reply = number | 'hang' | 'trickle';

export interface Received {
  webhookId: string;
  headers: IncomingHttpHeaders;
  body: string;
  event: { id: string; type: string } & Record<string, unknown>;
  /** Which of the receiver's secrets verified it (its index), or -1 for none. */
  verifiedWith: number;
  status: Reply;
  receivedAt: Date;
}

export interface Receiver {
  url: string;
  /** The secrets signatures are verified with; add an endpoint's once it is made. */
  secrets: string[];
  received: Received[];
  /** Requests being answered right now (the most seen at once: `mostAtOnce`). */
  inFlight: number;
  mostAtOnce: number;
  /** Replies to the next requests, in order; after them every request gets `otherwise`. */
  script(replies: Reply[], otherwise?: Reply): void;
  /** Answers every request held open ('hang') with `status` now. */
  release(status: number): void;
  /** Resolves once `count` requests have arrived (within `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(secrets: string[] = []): Promise<Receiver> {
  const received: Received[] = [];
  let replies: Reply[] = [];
  let otherwise: Reply = 204;
  const waiters = new Set<() => void>();
  const held = new Set<ServerResponse>();
  const state = { inFlight: 0, mostAtOnce: 0 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      const verifiedWith = secrets.findIndex((secret) => {
        try {
          new Webhook(secret).verify(body, headers);
          return true;
        } catch {
          return false;
        }
      });
      const status = replies.shift() ?? otherwise;
      received.push({
        webhookId: String(req.headers['webhook-id']),
        headers: req.headers,
        body,
        event: JSON.parse(body),
        verifiedWith,
        status,
        receivedAt: new Date(),
      });
      for (const wake of waiters) wake();
      state.inFlight++;
      state.mostAtOnce = Math.max(state.mostAtOnce, state.inFlight);
      res.on('close', () => state.inFlight--);
      if (status === 'hang') {
        held.add(res);
        res.on('close', () => held.delete(res));
        return;
      }
      if (status === 'trickle') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const drip = setInterval(() => res.write('.'), 100);
        res.on('close', () => clearInterval(drip));
        return;
      }
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    secrets,
    received,
    get inFlight() {
      return state.inFlight;
    },
    get mostAtOnce() {
      return state.mostAtOnce;
    },
    release(status) {
      for (const res of held) res.writeHead(status).end();
      held.clear();
    },
    script(next, after = 204) {
      replies = [...next];
      otherwise = after;
    },
    waitFor(count, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (received.length < count) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(received.slice());
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`the receiver got ${received.length} of ${count} deliveries in ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
