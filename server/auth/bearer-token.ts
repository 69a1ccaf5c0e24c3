import type { IncomingMessage } from 'node:http';

/** The credential of `Authorization: Bearer <token>` (RFC 6750 §2.1), which both surfaces accept. */
export function bearerToken(req: IncomingMessage): string | undefined {
  return /^Bearer +(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
}
