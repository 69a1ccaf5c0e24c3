import type { IncomingMessage } from 'node:http';

/** The headers that carry a credential on either surface (a token or key as `Bearer`, or a key on its own). */
const CARRIERS = [
  ['Authorization', 'authorization'],
  ['X-Service-API-Key', 'x-service-api-key'],
] as const;

/** The credential headers a request sends (an empty header carries nothing), as the spec names them. */
export function credentialCarriers(req: IncomingMessage): string[] {
  return CARRIERS.filter(([, field]) => Boolean(req.headers[field])).map(([name]) => name);
}
