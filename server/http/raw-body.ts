// A request body's bytes as received, kept by the JSON parser for the operations that verify a signature over them.
import type { IncomingMessage } from 'node:http';

const rawBodies = new WeakMap<IncomingMessage, Buffer>();

/** express.json's `verify` hook: remembers the bytes it is about to parse. */
export function keepRawBody(req: IncomingMessage, _res: unknown, buffer: Buffer): void {
  rawBodies.set(req, buffer);
}

export function rawBodyOf(req: IncomingMessage): Buffer | undefined {
  return rawBodies.get(req);
}
