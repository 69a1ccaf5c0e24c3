// Failures counted per key in a fixed window (express-rate-limit on the limit stores: Redis when configured, so every
// process shares one count), each request counted before it is handled and given back unless it failed. Past the
// bound every request of that key is refused, the right credential too, so the answer tells a guesser nothing. The
// sign-in form and the token endpoint's client authentication both throttle this way (router.ts,
// client-auth-limit.ts).
import type { Request, RequestHandler, Response } from 'express';
import { rateLimit } from 'express-rate-limit';
import type { OnStoreFailure } from '../limits/limit-store-guard.ts';
import type { LimitStores } from '../limits/rate-limits.ts';

export interface FailureThrottle {
  /** The limit store's scope: its counters' name. */
  scope: string;
  /** Failures allowed per key and window. */
  limit: number;
  windowMs: number;
  /** What the throttle does while its counters are unavailable (the README's "When a dependency fails" table). */
  onStoreFailure: OnStoreFailure;
  /** The key a request counts under; `undefined`: not counted by this throttle. Absent: the client address. */
  keyOf?: (req: Request) => string | undefined;
  /** Whether the handled request succeeded (its count is given back). Absent: a status below 400. */
  succeeded?: (req: Request, res: Response) => boolean;
  /** Answers a refused request (429; the limiter has set `Retry-After` and the RateLimit headers). */
  refuse: (req: Request, res: Response) => void;
}

export function failureThrottle(stores: LimitStores, throttle: FailureThrottle): RequestHandler {
  const { keyOf } = throttle;
  return rateLimit({
    windowMs: throttle.windowMs,
    limit: throttle.limit,
    skipSuccessfulRequests: true,
    ...(throttle.succeeded ? { requestWasSuccessful: throttle.succeeded } : {}),
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    store: stores.create(throttle.scope, throttle.onStoreFailure),
    ...(keyOf ? { keyGenerator: (req: Request) => keyOf(req)!, skip: (req: Request) => keyOf(req) === undefined } : {}),
    // Its check that a limiter is not made while answering a request formats a stack trace, which makes Node parse
    // the whole source map of dist/ during every start; throttles are made once, with the app.
    validate: { creationStack: false },
    handler: (req, res) => throttle.refuse(req, res),
  });
}
