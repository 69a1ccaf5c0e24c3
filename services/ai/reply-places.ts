// An account's places for AI replies in flight (queued or generating): an `ai_reply` lease each (services/leases/),
// taken before the request may wait or start and given back when its reply ends, so that the bound holds across
// processes: REPLIES_IN_FLIGHT per account by plan, one per conversation.
import { REPLIES_IN_FLIGHT } from '../../domain/bounds.ts';
import type { AccountLeases, Lease } from '../leases/account-leases.ts';

export type AccountPlan = keyof typeof REPLIES_IN_FLIGHT;

/** What a refused client is asked to wait: about the length of one reply, after which a place is likely free. */
export const REPLY_RETRY_AFTER_SECONDS = 10;

/** One account's place for a reply, held while the request waits or generates. */
export type Reservation =
  | { kind: 'reserved'; lease: Lease }
  /** `account`: the account has `limit` replies in flight; `conversation`: the conversation has its one. */
  | { kind: 'refused'; reason: 'account' | 'conversation'; limit: number };

/**
 * One of the account's places for a reply (continuing `conversation`, if any), or why there is none. A place lost
 * while the reply runs (its renewal came too late) lets the reply finish: at worst one more reply runs meanwhile.
 */
export async function reserveReply(
  leases: AccountLeases,
  request: { account: string; plan: AccountPlan; conversation?: string | undefined },
): Promise<Reservation> {
  const limit = REPLIES_IN_FLIGHT[request.plan];
  const taken = await leases.take(
    { user_id: request.account },
    { kind: 'ai_reply', group: request.conversation, limit, perGroup: 1 },
    () => {},
  );
  if ('id' in taken) return { kind: 'reserved', lease: taken };
  return { kind: 'refused', reason: taken.refused === 'group' ? 'conversation' : 'account', limit };
}
