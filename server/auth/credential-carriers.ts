import type { Request } from 'express';

/** The headers that carry a credential on either surface (a token or key as `Bearer`, or a key on its own). */
const CARRIERS = ['Authorization', 'X-Service-API-Key'] as const;

/** The credential headers a request sends (an empty header carries nothing). */
export function credentialCarriers(req: Request): string[] {
  return CARRIERS.filter((name) => Boolean(req.get(name)));
}
