// Failed authentications per client address. Each costs a lookup (a key hash, a grant row) or a signature check, so
// an address that fails too often is refused with 429, before any lookup, until its window ends. The count lives in
// the limit stores (Redis: shared by every process); which addresses are refused is remembered by each process as it
// learns it from that count on a failure, so a request that authenticates pays no extra store call.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { credentialCarriers } from './credential-carriers.ts';
import type { ClientAddress } from '../http/client-address.ts';
import { Problem } from '../http/problems.ts';
import { createLimiter, type LimitStores } from '../limits/rate-limits.ts';

/**
 * Failed authentications allowed per address and window: one a second on average, well above what the expired
 * tokens of a school behind one NAT produce, far below what guessing or a lookup flood needs.
 */
export const AUTH_FAILURES_PER_WINDOW = 300;
const WINDOW_MS = 5 * 60_000;

export interface AuthFailureLimit {
  /** Before authentication: refuses (429) a request with credentials from an address over its limit. */
  check(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /**
   * The same, for a request whose credential is in its URL (a calendar feed's token): every such request carries one,
   * so it is refused whether or not it sends a credential header.
   */
  checkUrlCredential(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** After credentials failed: counts the failure; the one over the limit is refused with 429 instead of 401. */
  recordFailure(req: IncomingMessage, res: ServerResponse): Promise<void>;
}

/** `clientAddress`: the request's client address under the `trust proxy` setting (server/http/client-address.ts). */
export function authFailureLimit(stores: LimitStores, clientAddress: ClientAddress): AuthFailureLimit {
  const count = createLimiter<string>(
    'auth-failures',
    [{ name: '5-minute', windowMs: WINDOW_MS, limitOf: () => AUTH_FAILURES_PER_WINDOW, keyOf: (address) => address }],
    stores,
    // Fails open: credentials here are unguessable tokens and keys, so the count guards against lookup floods,
    // not guessing; while Redis is away a client with an expired token must still be told 401, not 503.
    { onStoreFailure: 'allow', subject: 'failed authentications from this address' },
  );
  const refusedUntil = new Map<string, number>();

  async function countFailure(req: IncomingMessage, res: ServerResponse, address: string): Promise<void> {
    try {
      await count(req, res, address);
    } catch (error) {
      if (error instanceof Problem && error.status === 429)
        refusedUntil.set(address, Date.now() + Number(res.getHeader('Retry-After')) * 1000);
      throw error;
    }
  }

  async function refuseIfOver(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (refusedUntil.size === 0) return; // nobody refused: the common case costs no address lookup
    const address = clientAddress(req);
    const until = refusedUntil.get(address);
    if (until === undefined) return;
    if (until <= Date.now()) return void refusedUntil.delete(address);
    // Counted like a failure: the shared count says whether the window has ended meanwhile (then it passes).
    await countFailure(req, res, address);
    refusedUntil.delete(address);
  }

  return {
    check: async (req, res) => {
      if (credentialCarriers(req).length > 0) await refuseIfOver(req, res);
    },
    checkUrlCredential: refuseIfOver,
    recordFailure: (req, res) => countFailure(req, res, clientAddress(req)),
  };
}
