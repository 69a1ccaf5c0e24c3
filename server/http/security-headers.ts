// helmet's headers, which depend on nothing in the request with its defaults: helmet computes them once here, and each
// response gets them in one loop instead of through helmet's thirteen chained middlewares.
import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet from 'helmet';

/** Each header helmet sets on every response, as helmet names it, with its value. */
export const SECURITY_HEADERS: ReadonlyArray<readonly [string, string]> = recordHelmetHeaders();

function recordHelmetHeaders(): Array<[string, string]> {
  const headers: Array<[string, string]> = [];
  const recorder = { setHeader: (name: string, value: string) => headers.push([name, value]), removeHeader: () => {} };
  helmet()({} as IncomingMessage, recorder as unknown as ServerResponse, () => {});
  return headers;
}

export function securityHeaders() {
  return (_req: IncomingMessage, res: ServerResponse, next: () => void) => {
    for (const [name, value] of SECURITY_HEADERS) res.setHeader(name, value);
    next();
  };
}
