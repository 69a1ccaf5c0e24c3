// Per-key rate limits: fixed windows counted by express-rate-limit, in process memory by default or in Redis
// (rate-limit-redis) so that every process behind a load balancer shares one count per key.
import type { Request, Response } from 'express';
import { MemoryStore, rateLimit, type Store } from 'express-rate-limit';
import { RedisStore } from 'rate-limit-redis';
import { createClient } from 'redis';
import { countRateLimitRefusal } from './metrics.ts';
import { problems } from './problems.ts';

export interface LimitWindow<P> {
  /** Names the window in the RateLimit headers and in the 429 detail. */
  name: string;
  windowMs: number;
  limitOf: (principal: P) => number;
  /** Identifies whose count this is (a key id, a user id). */
  keyOf: (principal: P) => string;
}

/** Makes one counter store per window (express-rate-limit needs a store per limiter). */
export interface LimitStores {
  create(scope: string): Store;
  close(): Promise<void>;
}

export function memoryLimitStores(): LimitStores {
  return { create: () => new MemoryStore(), close: async () => {} };
}

export async function redisLimitStores(url: string, keyPrefix = 'rl:'): Promise<LimitStores> {
  const client = createClient({ url });
  client.on('error', () => {}); // failures surface on the commands themselves; avoid an unhandled 'error' event
  await client.connect();
  return {
    create: (scope) => new RedisStore({ sendCommand: (...args: string[]) => client.sendCommand(args), prefix: `${keyPrefix}${scope}:` }),
    close: async () => {
      await client.close();
    },
  };
}

const PRINCIPAL = Symbol('rate-limited principal');

/**
 * Builds the limiter of a surface: its windows run in order and the first exhausted one refuses with a 429
 * problem, Retry-After and the IETF draft-8 RateLimit headers (one list member per window). A request refused
 * by an earlier window is not counted by the later ones.
 */
export function createLimiter<P>(scope: string, windows: LimitWindow<P>[], stores: LimitStores, subject = 'this key') {
  const principalOf = (res: Response) => res.locals[PRINCIPAL as never] as P;
  const middlewares = windows.map((window) =>
    rateLimit({
      windowMs: window.windowMs,
      limit: (_req, res) => window.limitOf(principalOf(res)),
      keyGenerator: (_req, res) => window.keyOf(principalOf(res)),
      identifier: window.name,
      standardHeaders: 'draft-8',
      legacyHeaders: false,
      store: stores.create(`${scope}:${window.name}`),
      handler: (_req, res, next) => {
        const limit = window.limitOf(principalOf(res));
        const retryAfter = res.getHeader('Retry-After');
        countRateLimitRefusal(`${scope}:${window.name}`);
        next(problems.rateLimited(`The per-${window.name} limit of ${subject} (${limit} requests) is exhausted; retry in ${retryAfter} seconds.`));
      },
    }),
  );
  return async (req: Request, res: Response, principal: P): Promise<void> => {
    res.locals[PRINCIPAL as never] = principal as never;
    for (const middleware of middlewares) {
      await new Promise<void>((resolve, reject) => {
        void middleware(req, res, (error?: unknown) => (error ? reject(error) : resolve()));
      });
    }
  };
}
