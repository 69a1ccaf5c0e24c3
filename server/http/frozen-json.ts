// Sending a body that handlers return again and again unchanged (reference data kept in memory) without serializing it
// for every request: a handler marks such a body by returning it frozen (Object.freeze, deeply), and its JSON and
// ETag are computed once, when it is first sent, and kept for as long as the body itself is kept (a WeakMap: when the
// handler's cache drops it, they go with it).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { JSON_TYPE, sendBody, serialize, type SerializedBody } from './send-body.ts';

const serialized = new WeakMap<object, SerializedBody>();

export function isFrozenBody(body: unknown): body is object {
  return typeof body === 'object' && body !== null && Object.isFrozen(body);
}

/** What sendJson sends (the same bytes, Content-Type, Content-Length, ETag and 304), from JSON serialized once. */
export function sendFrozenJson(req: IncomingMessage, res: ServerResponse, status: number, body: object): void {
  let sent = serialized.get(body);
  if (!sent) {
    sent = serialize(JSON.stringify(body));
    serialized.set(body, sent);
  }
  sendBody(req, res, status, JSON_TYPE, sent);
}
