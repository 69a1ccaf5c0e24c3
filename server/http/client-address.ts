// The client's address of a request served without Express (the API surfaces), by the same rule as Express's `req.ip`.
import type { IncomingMessage } from 'node:http';
import proxyaddr from 'proxy-addr';

export type ClientAddress = (req: IncomingMessage) => string;

/**
 * `trust`: Express's compiled `trust proxy` setting (`app.get('trust proxy fn')`), so that TRUST_PROXY means one thing
 * for every path: behind a trusted proxy, the address before it in X-Forwarded-For; else the socket's peer.
 */
export function clientAddressBy(trust: (address: string, hop: number) => boolean): ClientAddress {
  return (req) => proxyaddr(req, trust) ?? 'unknown';
}
