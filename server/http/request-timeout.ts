// How long a request (its headers and its body) may take to arrive. Node's own default lets a client that trickles a
// body hold its connection, and the memory of a half-read request, for 300 seconds; a few hundred such clients would
// hold every socket the process can take. Past REQUEST_TIMEOUT_MS Node answers 408 and closes the connection. Only the
// arrival of the request is bounded: a long response (a download, a readiness stream) is not.
import type { ServerOptions } from 'node:http';

/** REQUEST_TIMEOUT_MS's default: a 100 KiB body arrives in well under a second even on a slow mobile link. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/** The options of every HTTP listener of the service (node:http createServer). */
export function requestTimeoutOptions(requestTimeoutMs: number): ServerOptions {
  return {
    requestTimeout: requestTimeoutMs,
    // The headers within the same bound (Node refuses a headers timeout longer than the request's).
    headersTimeout: requestTimeoutMs,
    // Node looks for expired requests this often (30 s by default); a quarter of the bound, so a request is cut off
    // at most 25% late, and at most once a second, so the sweep over open connections stays cheap.
    connectionsCheckingInterval: Math.min(1_000, Math.max(50, Math.floor(requestTimeoutMs / 4))),
  };
}
