import type { Request } from 'express';

/** The credential of `Authorization: Bearer <token>` (RFC 6750 §2.1), which both surfaces accept. */
export function bearerToken(req: Request): string | undefined {
  return /^Bearer +(\S+)\s*$/i.exec(req.get('authorization') ?? '')?.[1];
}
