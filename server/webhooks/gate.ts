// Fair delivery: one slow or dead endpoint cannot delay another's deliveries. Each attempt job, before it sends,
// passes its endpoint's gate (db/queries/endpoint-gates.ts), under its account's lock:
//   - one attempt in flight per endpoint: the attempt takes the endpoint's lease, which ends when its outcome is
//     recorded, or by itself `leaseMs` later if its process died;
//   - at most `attemptsPerAccount` attempts in flight per account (a student's endpoints, or an app's), so one
//     account's dead receivers hold at most that many of the worker slots, in every process together;
//   - a circuit breaker: after `breakerThreshold` consecutive failed attempts (an error status, no answer, a
//     timeout) the endpoint's attempts pause, 30 s after the threshold and twice as long after each failed probe,
//     up to 10 min; one attempt then probes it, and a success closes it.
// A job the gate holds back is postponed, never lost: in one transaction its job completes and the same attempt is
// sent again to start when the gate may let it through (pg-boss `startAfter`). It holds no worker slot meanwhile,
// and it spends none of the delivery's retries: nothing was sent, so its attempts, its retry schedule and its
// next_attempt_at are unchanged (an endpoint failing for three days is still disabled, since each probe fails).
// When an attempt ends, it hands its place to the account's delivery that has waited longest (a job that starts
// now), so a busy endpoint's backlog goes through one attempt after another instead of waiting out the lease.
import type { Db } from '../../db/connect.ts';
import { accountLeases, lockAccountGates, longestWaitingDelivery, readGate, settleGate, takeLease, type GateAccount } from '../../db/queries/endpoint-gates.ts';

export interface DeliveryLimits {
  /** Attempts one process makes at once: each is a pg-boss worker of its own, so none waits for another. */
  attemptsPerProcess: number;
  /** Attempts in flight at once to one account's endpoints, in every process together. */
  attemptsPerAccount: number;
  /** Consecutive failed attempts that open an endpoint's breaker. */
  breakerThreshold: number;
  /** How long the breaker first stays open; doubled after each failed probe, up to breakerMaxMs. */
  breakerBaseMs: number;
  breakerMaxMs: number;
}

export const DELIVERY_LIMITS: DeliveryLimits = {
  attemptsPerProcess: 10,
  attemptsPerAccount: 3,
  breakerThreshold: 5,
  breakerBaseMs: 30_000,
  breakerMaxMs: 10 * 60_000,
};

export type GateRefusal = 'endpoint_busy' | 'account_busy' | 'circuit_open';
export type Admission = { admitted: true } | { admitted: false; reason: GateRefusal; until: Date };

export function accountOf(endpoint: { endpoint_user_id: string | null; endpoint_client_id: string | null }): GateAccount {
  return endpoint.endpoint_user_id !== null ? { user_id: endpoint.endpoint_user_id } : { client_id: endpoint.endpoint_client_id! };
}

/**
 * Whether the attempt of job `jobId` may go to the endpoint now; if so it holds the endpoint's lease until
 * `now + leaseMs` (a job pg-boss gives back after its process died keeps its id, so it finds its own lease).
 */
export async function admitAttempt(
  trx: Db,
  gate: { endpointId: string; account: GateAccount; jobId: string; now: Date; leaseMs: number; limits: DeliveryLimits },
): Promise<Admission> {
  const { endpointId, account, jobId, now, limits } = gate;
  await lockAccountGates(trx, account);
  const current = await readGate(trx, endpointId, account);
  if (current.open_until && current.open_until > now) return { admitted: false, reason: 'circuit_open', until: current.open_until };
  if (current.lease_until && current.lease_until > now && current.lease_job !== jobId) return { admitted: false, reason: 'endpoint_busy', until: current.lease_until };
  const inFlight = await accountLeases(trx, account, endpointId, now);
  if (inFlight.count >= limits.attemptsPerAccount) return { admitted: false, reason: 'account_busy', until: inFlight.firstEnd ?? new Date(now.getTime() + gate.leaseMs) };
  await takeLease(trx, endpointId, jobId, new Date(now.getTime() + gate.leaseMs));
  return { admitted: true };
}

/** How long the breaker stays open after `failures` consecutive failures (0: it stays closed). */
export function breakerOpenMs(failures: number, limits: DeliveryLimits, scale: number): number {
  if (failures < limits.breakerThreshold) return 0;
  return Math.min(limits.breakerBaseMs * 2 ** (failures - limits.breakerThreshold), limits.breakerMaxMs) * scale;
}

/**
 * Records an admitted attempt's outcome at its gate (lease ended, breaker updated) and returns the delivery its
 * place goes to, if one is waiting. Call in the transaction that records the attempt.
 */
export async function settleAttempt(
  trx: Db,
  gate: { endpointId: string; account: GateAccount; jobId: string; deliveryId: string; succeeded: boolean; now: Date; limits: DeliveryLimits; scale: number },
): Promise<{ open_until: Date | null; next: { id: string; next_attempt_at: Date } | undefined }> {
  const { now, limits } = gate;
  await lockAccountGates(trx, gate.account);
  const breaker = await settleGate(trx, gate.endpointId, gate.jobId, {
    succeeded: gate.succeeded,
    openUntil: (failures) => {
      const ms = breakerOpenMs(failures, limits, gate.scale);
      return ms > 0 ? new Date(now.getTime() + ms) : null;
    },
  });
  const next = await longestWaitingDelivery(trx, gate.account, gate.deliveryId, now);
  return { open_until: breaker.open_until, next };
}
