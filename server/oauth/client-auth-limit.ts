// Failed client authentications at the token endpoint (a wrong or missing client_secret: `invalid_client`), counted
// per client_id and per client address, as the sign-in form counts failed sign-ins (failure-throttle.ts). Past the
// bound every token request of that client or address is refused (429, RFC 6749's error object with `slow_down`, and
// Retry-After), the right secret too. Other errors (an expired code, a used refresh token) do not count.
import type { Request, RequestHandler, Response } from 'express';
import { hashSecret } from '../auth/secret-hash.ts';
import type { LimitStores } from '../limits/rate-limits.ts';
import { failureThrottle } from './failure-throttle.ts';

/**
 * Failed client authentications allowed per client_id in 15 minutes, from all addresses together. A client_id is
 * public, so this is also what it costs a stranger to hold an app's token endpoint shut for a window; secrets are
 * long and random, so the bound is against floods of checks, not a guess that could succeed.
 */
export const CLIENT_AUTH_FAILURES_PER_CLIENT = 100;
/** Failed client authentications allowed per client address in 15 minutes, over all clients: the sign-in form's 20. */
export const CLIENT_AUTH_FAILURES_PER_ADDRESS = 20;
const WINDOW_MS = 15 * 60_000;

/** Marks a token request that failed client authentication, so the limiters keep its count. */
export function countClientAuthFailure(res: Response): void {
  res.locals.clientAuthenticationFailed = true;
}

/** The throttles to put before the token endpoint's handler: per address, then per client_id. */
export function clientAuthLimit(stores: LimitStores): RequestHandler[] {
  const throttle = (scope: string, limit: number, keyOf?: (req: Request) => string | undefined) =>
    failureThrottle(stores, {
      scope,
      limit,
      windowMs: WINDOW_MS,
      // Fails open: secrets cannot be guessed within any number of requests a Redis outage lasts, and while Redis is
      // away every app must still refresh its tokens.
      onStoreFailure: 'allow',
      ...(keyOf ? { keyOf } : {}),
      succeeded: (_req, res) => res.locals.clientAuthenticationFailed !== true,
      refuse: (_req, res) =>
        res.status(429).set('Cache-Control', 'no-store').json({
          error: 'slow_down',
          error_description: 'Too many failed client authentications; retry after the time Retry-After gives.',
        }),
    });
  return [
    throttle('oauth-client-auth', CLIENT_AUTH_FAILURES_PER_ADDRESS),
    // Hashed: the store holds a fixed-length key whatever the request sends.
    throttle('oauth-client-auth-client', CLIENT_AUTH_FAILURES_PER_CLIENT, (req) => {
      const clientId = claimedClientId(req);
      return clientId ? hashSecret(clientId) : undefined;
    }),
  ];
}

/** The client_id a token request names, in HTTP Basic authentication or the form (where the library reads it). */
function claimedClientId(req: Request): string | undefined {
  const basic = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(req.headers.authorization ?? '');
  if (basic) {
    const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon > 0) {
      try {
        return decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' '));
      } catch {
        return decoded.slice(0, colon);
      }
    }
  }
  const clientId = (req.body as Record<string, unknown> | undefined)?.client_id;
  return typeof clientId === 'string' && clientId ? clientId : undefined;
}
