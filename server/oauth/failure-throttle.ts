// Failures counted per key in a fixed window, on the limiter every path uses (server/limits/rate-limits.ts: Redis when
// configured, so every process shares one count), each request counted before it is handled and given back once it
// has succeeded. Past the bound every request of that key is refused, the right credential too, so the answer tells a
// guesser nothing. The sign-in form and the token endpoint's client authentication both throttle this way (router.ts,
// client-auth-limit.ts).
import type { Request, RequestHandler, Response } from 'express';
import { ipKeyGenerator } from 'express-rate-limit';
import type { OnStoreFailure } from '../limits/limit-store-guard.ts';
import { Problem } from '../http/problems.ts';
import { createLimiter, type LimitStores } from '../limits/rate-limits.ts';

export interface FailureThrottle {
  /** The limiter's scope: its counters' name. */
  scope: string;
  /** Failures allowed per key and window. */
  limit: number;
  /** A whole number of minutes. */
  windowMs: number;
  /** What the throttle does while its counters are unavailable (the table of docs/production.md#when-a-dependency-fails). */
  onStoreFailure: OnStoreFailure;
  /** The key a request counts under; `undefined`: not counted by this throttle. Absent: the client address. */
  keyOf?: (req: Request) => string | undefined;
  /** Whether the handled request succeeded (its count is given back). Absent: a status below 400. */
  succeeded?: (req: Request, res: Response) => boolean;
  /** Answers a refused request (429; the limiter has set `Retry-After` and the RateLimit headers). */
  refuse: (req: Request, res: Response) => void;
}

/** The client address as express-rate-limit keys it: an IPv6 address by its /56, which one subscriber usually holds whole. */
const clientNetwork = (req: Request) => (req.ip === undefined ? undefined : ipKeyGenerator(req.ip));
const statusBelow400 = (_req: Request, res: Response) => res.statusCode < 400;

export function failureThrottle(stores: LimitStores, throttle: FailureThrottle): RequestHandler {
  const { limit, windowMs } = throttle;
  const count = createLimiter<string>(
    throttle.scope,
    // Named as express-rate-limit names a window in the RateLimit headers ("20-in-15min").
    [{ name: `${limit}-in-${windowMs / 60_000}min`, windowMs, limitOf: () => limit, keyOf: (key) => key }],
    stores,
    { onStoreFailure: throttle.onStoreFailure },
  );
  const keyOf = throttle.keyOf ?? clientNetwork;
  const succeeded = throttle.succeeded ?? statusBelow400;
  return (req, res, next) => {
    const key = keyOf(req);
    if (key === undefined) return next();
    count(req, res, key).then(
      (giveBack) => {
        res.once('finish', () => {
          if (succeeded(req, res)) void giveBack();
        });
        next();
      },
      (error: unknown) => (error instanceof Problem && error.status === 429 ? throttle.refuse(req, res) : next(error)),
    );
  };
}
