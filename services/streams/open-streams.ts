// The open streams of an account, whatever their kind (readiness, a room's): one bound for them all, counted per
// account (never per key: a second key does not double it) across every process. Each stream holds a lease of kind
// `stream` (services/leases/), its own kind as the lease's group; the lease ends the stream when its credential is
// revoked or its row is lost.
import type { AccountLeases, LeaseHolder, LeaseLoss } from '../leases/account-leases.ts';
import { LimitError } from '../../domain/errors.ts';
import { MAX_OPEN_STREAMS } from '../../domain/bounds.ts';

/** Why a stream must end before its time; the stream tells its client in its last event. */
export type StreamRevocation = LeaseLoss;

export type StreamHolder = Required<LeaseHolder>;

export interface StreamPlace {
  /** The stream's lease row: what tells whether its place still stands. */
  readonly id: string;
  /** Frees the place (once; later calls do nothing). */
  release(): Promise<void>;
}

export interface OpenStreams {
  /**
   * Takes one of the account's places for a stream of `kind`, or throws a 429 `too_many_streams` refusal with
   * Retry-After. `revoked` is called (once) when the stream must end: its account or credential is gone, or its place
   * was lost (its row deleted).
   */
  take(holder: StreamHolder, kind: string, revoked: (why: StreamRevocation) => void): Promise<StreamPlace>;
}

export function openStreams(leases: AccountLeases, max = MAX_OPEN_STREAMS): OpenStreams {
  return {
    async take(holder, kind, revoked) {
      const taken = await leases.take(holder, { kind: 'stream', group: kind, limit: max }, revoked);
      if ('id' in taken) return taken;
      const retryAfterSeconds = Math.max(1, Math.ceil(taken.retryAfterMs / 1000));
      const detail = `This account has ${max} streams open, the most it may hold at once (whichever key or token opened them); close one, or retry in ${retryAfterSeconds} seconds.`;
      throw new LimitError('too_many_streams', detail, { max, retryAfterSeconds });
    },
  };
}
