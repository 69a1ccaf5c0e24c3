// Writing a whole response body on Node's own request and response, as Express's res.send writes it: Content-Type,
// Content-Length, a weak ETag of the bytes (Express's default `etag` setting, the `etag` package), 304 with no body to
// a GET or HEAD whose If-None-Match matches (the `fresh` package, whatever the request's Cache-Control), no body for
// HEAD. The API surfaces are served without Express (server/http/api-requests.ts), and partner v1 documents the ETag
// for polling.
import { hash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import fresh from 'fresh';

export const JSON_TYPE = 'application/json; charset=utf-8';

/** The bytes of a body and their ETag: computed once for a body sent again and again (server/http/frozen-json.ts). */
export interface SerializedBody {
  bytes: Buffer;
  etag: string;
}

export function serialize(text: string): SerializedBody {
  const bytes = Buffer.from(text, 'utf8');
  return { bytes, etag: weakEtag(bytes) };
}

/**
 * The `etag` package's weak ETag of the bytes (`W/"<length in hex>-<the first 27 characters of their SHA-1 in
 * base64>"`), with Node's one-shot hash instead of a Hash object made for each body.
 */
export function weakEtag(bytes: Buffer): string {
  if (bytes.length === 0) return 'W/"0-2jmj7l5rSw0yVb/vlWAYkK/YBwk"';
  return `W/"${bytes.length.toString(16)}-${hash('sha1', bytes, 'base64').slice(0, 27)}"`;
}

/** Sends `body` with `status`; headers set earlier (request id, limits) are kept, an ETag set earlier wins. */
export function sendBody(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  contentType: string,
  body: SerializedBody,
): void {
  res.statusCode = status;
  if (!res.hasHeader('Content-Type')) res.setHeader('Content-Type', contentType);
  if (!res.hasHeader('ETag')) res.setHeader('ETag', body.etag);
  if (isFresh(req, res)) {
    res.statusCode = 304;
    res.removeHeader('Content-Type');
    res.end();
    return;
  }
  res.setHeader('Content-Length', body.bytes.length);
  if (req.method === 'HEAD') res.end();
  else res.end(body.bytes);
}

export function sendJson(req: IncomingMessage, res: ServerResponse, status: number, body: unknown): void {
  sendBody(req, res, status, JSON_TYPE, serialize(JSON.stringify(body)));
}

/**
 * Express's `req.fresh`, but blind to the request's Cache-Control: a conditional GET or HEAD whose validator still
 * matches a successful response. `fresh` answers "stale" to any `no-cache`, which fetch (undici) adds to every request
 * carrying If-None-Match; that directive is for caches on the way, while the origin evaluates the condition whatever
 * the client's cache directives (RFC 9110 §13.1.2), so only the validators are passed on.
 */
function isFresh(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  if ((res.statusCode < 200 || res.statusCode >= 300) && res.statusCode !== 304) return false;
  const { 'if-none-match': ifNoneMatch, 'if-modified-since': ifModifiedSince } = req.headers;
  if (ifNoneMatch === undefined && ifModifiedSince === undefined) return false;
  return fresh(
    { 'if-none-match': ifNoneMatch, 'if-modified-since': ifModifiedSince },
    { etag: res.getHeader('ETag'), 'last-modified': res.getHeader('Last-Modified') },
  );
}
