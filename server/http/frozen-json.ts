// Sending a body that handlers return again and again unchanged (reference data kept in memory) without serializing it
// for every request: a handler marks such a body by returning it frozen (Object.freeze, deeply), and its JSON and
// ETag are computed once, when it is first sent, and kept for as long as the body itself is kept (a WeakMap: when the
// handler's cache drops it, they go with it).
import type { Response } from 'express';

interface Serialized {
  bytes: Buffer;
  /** As Express computes it from the same bytes (its `etag fn` setting); undefined when ETags are off. */
  etag: string | undefined;
}

const serialized = new WeakMap<object, Serialized>();

export function isFrozenBody(body: unknown): body is object {
  return typeof body === 'object' && body !== null && Object.isFrozen(body);
}

/**
 * What `res.json(body)` sends: the same bytes, Content-Type, Content-Length and ETag, and 304 to a matching
 * If-None-Match (res.send's freshness check).
 */
export function sendFrozenJson(res: Response, body: object): void {
  let sent = serialized.get(body);
  if (!sent) {
    const { app } = res;
    const bytes = Buffer.from(JSON.stringify(body, app.get('json replacer'), app.get('json spaces')), 'utf8');
    const etagOf = app.get('etag fn') as ((body: Buffer) => string) | undefined;
    sent = { bytes, etag: etagOf?.(bytes) };
    serialized.set(body, sent);
  }
  if (!res.get('Content-Type')) res.setHeader('Content-Type', 'application/json; charset=utf-8');
  if (sent.etag && !res.get('ETag')) res.setHeader('ETag', sent.etag);
  res.send(sent.bytes);
}
