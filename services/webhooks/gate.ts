// Fair delivery: one slow or dead endpoint cannot delay another's deliveries. Each endpoint has a gate
// (db/queries/endpoint-gates.ts), changed only under its account's lock:
//   - one attempt in flight per endpoint: its job holds the endpoint's lease, which ends when the attempt's outcome
//     is recorded, or by itself when it runs out (a process that died);
//   - at most `attemptsPerAccount` leases live per account (a student's endpoints, or an app's), so one account's
//     dead receivers hold at most that many of the attempt slots, in every process together;
//   - a circuit breaker: after `breakerThreshold` consecutive failed attempts (an error status, no answer, a
//     timeout) the endpoint's attempts pause, 30 s after the threshold and twice as long after each failed probe,
//     up to 10 min; one attempt then probes it, and a success closes it.
// A delivery gets a job only when its endpoint's gate would let it through (queue.ts dispatchAccount): the job takes
// the lease when it is sent, so the queue only ever holds attempts that can run now, whatever an account's backlog.
// The others stay parked in webhook_deliveries (pending, due): when an attempt ends, its account's free places go
// to its parked deliveries that have waited longest, and a periodic sweep (queue.ts sweepParkedDeliveries) gives
// jobs to those whose turn came otherwise (a breaker that closed, a retry now due, a lease that ran out). A parked
// delivery spends none of its retries: nothing was sent, so its attempts, its retry schedule and its
// next_attempt_at are unchanged (an endpoint failing for three days is still disabled, since each probe fails).
import type { Db } from '../../db/connect.ts';
import {
  accountLeases,
  lockAccountGates,
  readGate,
  settleGate,
  takeLease,
  type GateAccount,
} from '../../db/queries/endpoint-gates.ts';

export interface DeliveryLimits {
  /** Attempts in flight or given a job at once, to one account's endpoints, in every process together. */
  attemptsPerAccount: number;
  /** Consecutive failed attempts that open an endpoint's breaker. */
  breakerThreshold: number;
  /** How long the breaker first stays open; doubled after each failed probe, up to breakerMaxMs. */
  breakerBaseMs: number;
  breakerMaxMs: number;
}

export const DELIVERY_LIMITS: DeliveryLimits = {
  attemptsPerAccount: 3,
  breakerThreshold: 5,
  breakerBaseMs: 30_000,
  breakerMaxMs: 10 * 60_000,
};

export type GateRefusal = 'endpoint_busy' | 'account_busy' | 'circuit_open';
export type Admission = { admitted: true } | { admitted: false; reason: GateRefusal; until: Date };

export function accountOf(endpoint: {
  endpoint_user_id: string | null;
  endpoint_client_id: string | null;
}): GateAccount {
  return endpoint.endpoint_user_id !== null
    ? { user_id: endpoint.endpoint_user_id }
    : { client_id: endpoint.endpoint_client_id! };
}

/**
 * Whether the attempt of job `jobId` may go to the endpoint now; if so it holds the endpoint's lease until
 * `now + leaseMs`. A job normally finds the lease it was given when it was sent (or, given back by pg-boss after its
 * process died, its own lease: it keeps its id); a job whose lease ran out takes the endpoint if it is still free.
 * A job held back makes no attempt and stays out of the queue: its delivery is parked, and goes when its turn comes.
 */
export async function admitAttempt(
  trx: Db,
  gate: { endpointId: string; account: GateAccount; jobId: string; now: Date; leaseMs: number; limits: DeliveryLimits },
): Promise<Admission> {
  const { endpointId, account, jobId, now, limits } = gate;
  const until = new Date(now.getTime() + gate.leaseMs);
  await lockAccountGates(trx, account);
  const current = await readGate(trx, endpointId, account);
  const leaseLive = current.lease_until !== null && current.lease_until > now;
  if (leaseLive && current.lease_job === jobId) {
    await takeLease(trx, endpointId, jobId, until);
    return { admitted: true };
  }
  if (current.open_until && current.open_until > now)
    return { admitted: false, reason: 'circuit_open', until: current.open_until };
  if (leaseLive) return { admitted: false, reason: 'endpoint_busy', until: current.lease_until! };
  const inFlight = await accountLeases(trx, account, endpointId, now);
  if (inFlight.count >= limits.attemptsPerAccount)
    return { admitted: false, reason: 'account_busy', until: inFlight.firstEnd ?? until };
  await takeLease(trx, endpointId, jobId, until);
  return { admitted: true };
}

/** How long the breaker stays open after `failures` consecutive failures (0: it stays closed). */
export function breakerOpenMs(failures: number, limits: DeliveryLimits, scale: number): number {
  if (failures < limits.breakerThreshold) return 0;
  return Math.min(limits.breakerBaseMs * 2 ** (failures - limits.breakerThreshold), limits.breakerMaxMs) * scale;
}

/**
 * Records an admitted attempt's outcome at its gate (lease ended, breaker updated); returns the breaker's new
 * `open_until`. Call in the transaction that records the attempt, then give the account's free places on
 * (queue.ts dispatchAccount).
 */
export async function settleAttempt(
  trx: Db,
  gate: {
    endpointId: string;
    account: GateAccount;
    jobId: string;
    succeeded: boolean;
    now: Date;
    limits: DeliveryLimits;
    scale: number;
  },
): Promise<{ open_until: Date | null }> {
  const { now, limits } = gate;
  await lockAccountGates(trx, gate.account);
  const breaker = await settleGate(trx, gate.endpointId, gate.jobId, {
    succeeded: gate.succeeded,
    openUntil: (failures) => {
      const ms = breakerOpenMs(failures, limits, gate.scale);
      return ms > 0 ? new Date(now.getTime() + ms) : null;
    },
  });
  return { open_until: breaker.open_until };
}
