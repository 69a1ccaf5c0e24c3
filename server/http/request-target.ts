// Reading a request on Node's own request object, which the API surfaces are served on (no Express there).
import type { IncomingMessage } from 'node:http';

/**
 * The request target's path without its query, not percent-decoded: what Express calls `req.path` outside a mounted
 * router. A request Express serves keeps its whole target in `originalUrl` (a mounted router shortens `url`).
 */
export function requestPath(req: IncomingMessage): string {
  const url = (req as { originalUrl?: string }).originalUrl ?? req.url ?? '/';
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/** A request header's value (`name` in lower case); Node joins repeated fields other than Set-Cookie into one. */
export function headerValue(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' ? value : undefined;
}
