// Cross-origin access to the API surfaces for the origins CORS_ORIGINS lists (the docs served elsewhere, a partner's
// browser app), and for no other: a browser refuses a response without Access-Control-Allow-Origin. The API's
// credentials are headers (a bearer token, an API key), never cookies, so credentials mode is never allowed. Runs
// before routing: openapi-backend would answer a preflight (OPTIONS) with 405.
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Request headers a browser client of the API sends beyond the CORS-safelisted ones (the specs' header parameters). */
export const CORS_ALLOWED_HEADERS = [
  'Authorization',
  'X-Service-API-Key',
  'Content-Type',
  'Idempotency-Key',
  'If-None-Match',
  'Last-Event-ID',
];

/**
 * Response headers a client reads that are not CORS-safelisted (the specs' response headers, and API-Version): without
 * this list a script sees none of them, a rate limit or a retry time included.
 */
export const CORS_EXPOSED_HEADERS = [
  'X-Request-Id',
  'API-Version',
  'RateLimit',
  'RateLimit-Policy',
  'Retry-After',
  'ETag',
  'WWW-Authenticate',
  'Allow',
  'Content-Disposition',
  'Idempotent-Replayed',
  'Sync-Token',
];

/** How long a browser may reuse a preflight's answer: Chromium's ceiling (two hours); others cap lower or higher. */
const PREFLIGHT_MAX_AGE_SECONDS = 7200;

export interface CorsOptions {
  /** Exact origins (scheme://host[:port]) allowed; app/config.ts validates them. */
  origins: readonly string[];
  /** The methods served at a path (empty: no operation there, and the preflight is left to the 404 or 405). */
  allowedMethods: (path: string) => string[];
  /** The request's path, as the surfaces route it. */
  pathOf: (req: IncomingMessage) => string;
}

export function cors(options: CorsOptions) {
  const origins = new Set(options.origins);
  const allowHeaders = CORS_ALLOWED_HEADERS.join(', ');
  const exposeHeaders = CORS_EXPOSED_HEADERS.join(', ');
  return (req: IncomingMessage, res: ServerResponse, next: () => void) => {
    // Whether the answer carries Allow-Origin depends on Origin, so a cache must key on it, for every origin.
    res.setHeader('Vary', 'Origin');
    const origin = req.headers.origin;
    if (!origin || !origins.has(origin)) return next();
    res.setHeader('Access-Control-Allow-Origin', origin);
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method']) {
      const methods = options.allowedMethods(options.pathOf(req));
      if (methods.length > 0) {
        res.writeHead(204, {
          'Access-Control-Allow-Methods': methods.join(', '),
          'Access-Control-Allow-Headers': allowHeaders,
          'Access-Control-Max-Age': String(PREFLIGHT_MAX_AGE_SECONDS),
        });
        res.end();
        return;
      }
    }
    res.setHeader('Access-Control-Expose-Headers', exposeHeaders);
    next();
  };
}
