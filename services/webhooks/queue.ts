// Scheduling webhook deliveries. webhook_deliveries holds what the API reads (status, attempts, next_attempt_at);
// an attempt runs as a job of the job engine (pg-boss, db/job-queue.ts), but a delivery gets its job only when its
// endpoint's gate would let the attempt through now (gate.ts): the job is sent together with the endpoint's lease,
// under the account's lock. Until then the delivery is parked: a pending row, due at next_attempt_at, which is all
// it needs to be attempted (nothing is lost if a process dies: the row outlives it). So the queue only ever holds
// attempts that can run now, a few per account, and another student's attempt waits behind those alone, never
// behind one account's backlog.
//
// Parked deliveries get their jobs
//   - from dispatchAccount, run when an attempt of the account ends (in the transaction that records it) and when
//     a job ends without an attempt: the free places go to the deliveries that have waited longest;
//   - from sweepParkedDeliveries, which each delivering process runs on start and then with every pass of its
// relay (relay.ts): new deliveries (fan-out, a test event, a re-send), retries now due, endpoints whose breaker closed,
// and leases that ran out with their process. What makes a delivery due now is announced on WEBHOOK_WORK_CHANNEL once
// it has committed, which wakes the relays: an outbox row (its table's trigger, a test event's included) and a re-send
// (here). The announcement is sent after the commit (db/notifications-after-commit.ts), so a process that dies in
// between leaves the work to the relays' poll.
//
// A job carries the delivery's next_attempt_at it was scheduled for (`due`): a job whose delivery has been
// rescheduled since (re-sent, retried, given up) finds another `due` there and makes no attempt.
//
// A delivery's status:
//   pending    an attempt is due at next_attempt_at (or running, or parked until its endpoint can take it);
//   succeeded  the endpoint answered 2xx (succeeded_at); nothing more is sent unless it is re-sent;
//   failed     delivery gave up: the retries ran out, the endpoint was disabled (by its owner, or after three
//              days of failures) or the app's grant no longer covers the event. A re-send makes it pending again.
import type { Db } from '../../db/connect.ts';
import { jobEngine, WEBHOOK_DELIVERY_QUEUE } from '../../db/job-queue.ts';
import { notifyAfterCommit } from '../../db/notifications.ts';
import { makeDeliveryDue, upsertDelivery } from '../../db/queries/deliveries.ts';
import {
  accountKey,
  accountsWithRunnableDeliveries,
  countAccountLeases,
  lockAccountGates,
  reserveEndpoint,
  runnableDeliveries,
  type GateAccount,
} from '../../db/queries/endpoint-gates.ts';
import type { DeliveryLimits } from './gate.ts';

/**
 * Announces, on commit, that a delivery may be due now. The outbox's trigger sends it for every event
 * (db/migrations/20261127_0701_outbox_notify.ts, which names it too); the relays of every process listen.
 */
export const WEBHOOK_WORK_CHANNEL = 'webhook_work';

/** What an attempt job carries. */
export interface AttemptJob {
  delivery_id: string;
  /** The next_attempt_at (ISO) the job was scheduled for. */
  due: string;
}

/** What dispatching needs: the account bound, how long a job's lease lasts, and the time. */
export interface DispatchOptions {
  limits: Pick<DeliveryLimits, 'attemptsPerAccount'>;
  leaseMs: number;
  now: Date;
}

/** Accounts one sweep dispatches for; a full sweep is followed by another at once. */
export const SWEEP_ACCOUNTS = 100;

/**
 * The delivery of an event to an endpoint, parked with its first attempt due now (the next sweep gives it a job);
 * an existing delivery of the pair (unique) is returned as it is. Returns the delivery's id.
 */
export async function scheduleDelivery(
  trx: Db,
  delivery: { eventId: string; endpointId: string },
  now = new Date(),
): Promise<string> {
  const { id } = await upsertDelivery(trx, { event_id: delivery.eventId, endpoint_id: delivery.endpointId, at: now });
  return id;
}

/**
 * One more attempt of an existing delivery, due now, with the same event (the same webhook-id): the delivery
 * becomes pending again, whatever it was. An attempt of it in flight finishes first (the endpoint's gate lets one
 * through at a time). False when there is no such delivery.
 */
export async function resendDelivery(trx: Db, deliveryId: string, now = new Date()): Promise<boolean> {
  const due = await makeDeliveryDue(trx, deliveryId, now);
  if (due) await notifyAfterCommit(trx, WEBHOOK_WORK_CHANNEL, '');
  return due;
}

/**
 * Gives the account's free places (attemptsPerAccount less its live leases) to its parked deliveries that may go
 * now, longest waiting first, one per endpoint: each gets a job, and the job the endpoint's lease. Runs under the
 * account's lock (taken here; a caller that holds it already keeps it). Returns how many jobs it sent.
 *
 * A job's priority is minus its rank among the account's attempts in flight or queued (0 for an account with none,
 * -1 for its second, …), and the attempt slots fetch the highest priority first (attempt-slots.ts): when the queue
 * holds more than the slots free, every account's first attempt goes before any account's second, whatever arrived
 * first — round robin over the accounts with work, so a crowd of accounts cannot keep another's first attempt waiting
 * behind theirs.
 */
export async function dispatchAccount(trx: Db, account: GateAccount, options: DispatchOptions): Promise<number> {
  const { now } = options;
  await lockAccountGates(trx, account);
  const room = options.limits.attemptsPerAccount - (await countAccountLeases(trx, account, now));
  if (room <= 0) return 0;
  const leases = options.limits.attemptsPerAccount - room;
  const runnable = await runnableDeliveries(trx, account, now, room);
  const until = new Date(now.getTime() + options.leaseMs);
  const boss = jobEngine(trx);
  for (const [rank, delivery] of runnable.entries()) {
    const job: AttemptJob = { delivery_id: delivery.id, due: delivery.next_attempt_at.toISOString() };
    const priority = -(leases + rank);
    const jobId = await boss.send(WEBHOOK_DELIVERY_QUEUE, job, { singletonKey: delivery.id, priority });
    if (!jobId) throw new Error(`the job of webhook delivery ${delivery.id} was not created`);
    await reserveEndpoint(trx, delivery.endpoint_id, account, jobId, until);
  }
  return runnable.length;
}

/**
 * Gives jobs to parked deliveries whose turn has come, account by account (one transaction each, so no two
 * accounts' locks are ever held together). Returns how many jobs it sent and whether it saw a full page of
 * accounts (more may be waiting).
 *
 * `fannedOut`: the accounts the caller has just made deliveries for, dispatched under their locks whatever the
 * account query saw. That query reads without the lock, so it can still see a lease that an ending attempt is
 * releasing; and that attempt's own dispatch may have looked before the new delivery was committed. Under the lock,
 * one of the two dispatches runs after the other has committed and sees both the free place and the delivery.
 */
export async function sweepParkedDeliveries(
  db: Db,
  options: Omit<DispatchOptions, 'now'> & { now?: () => Date; fannedOut?: GateAccount[] },
): Promise<{ sent: number; more: boolean }> {
  const now = options.now ?? (() => new Date());
  const runnable = await accountsWithRunnableDeliveries(db, now(), options.limits.attemptsPerAccount, SWEEP_ACCOUNTS);
  const accounts = new Map(
    [...(options.fannedOut ?? []), ...runnable].map((account) => [accountKey(account), account]),
  );
  let sent = 0;
  for (const account of accounts.values())
    sent += await db.transaction().execute((trx) => dispatchAccount(trx, account, { ...options, now: now() }));
  return { sent, more: runnable.length === SWEEP_ACCOUNTS };
}
