// Scheduling webhook deliveries. webhook_deliveries holds what the API reads (status, attempts, next_attempt_at);
// each attempt is a job of the job engine (pg-boss, db/job-queue.ts), sent inside the caller's transaction, so an
// attempt is scheduled exactly when the change that calls for it commits, on PostgreSQL and on the embedded
// database alike. pg-boss hands each job to one worker (SKIP LOCKED) and gives the job of a process killed
// mid-attempt to another worker once it expires; the endpoint's gate (gate.ts) lets one attempt at a time through
// to an endpoint, hence one at a time of a delivery.
//
// A job carries the delivery's next_attempt_at it was scheduled for (`due`): a job whose delivery has been
// rescheduled since (re-sent, retried, given up) finds another `due` there and makes no attempt. A job the gate
// holds back is sent again with the same `due`, to start later.
//
// A delivery's status:
//   pending    an attempt is due at next_attempt_at (or running, or waiting at its endpoint's gate);
//   succeeded  the endpoint answered 2xx (succeeded_at); nothing more is sent unless it is re-sent;
//   failed     delivery gave up: the retries ran out, the endpoint was disabled (by its owner, or after three
//              days of failures) or the app's grant no longer covers the event. A re-send makes it pending again.
import type { Db } from '../../db/connect.ts';
import { jobEngine, WEBHOOK_DELIVERY_QUEUE } from '../../db/job-queue.ts';
import { listPendingDeliveriesWithoutJob, makeDeliveryDue, upsertDelivery } from '../../db/queries/deliveries.ts';

/** What an attempt job carries. */
export interface AttemptJob {
  delivery_id: string;
  /** The next_attempt_at (ISO) the job was scheduled for. */
  due: string;
}

/**
 * Sends, in `trx`, the job of the attempt due at `due`. It starts at once, unless `startAfter` says when (a retry
 * waits for its `due`, a job the gate held back for the gate): a first attempt or a re-send never waits on a
 * caller's `now`, which may be a test's fixed instant.
 */
export async function scheduleAttempt(trx: Db, deliveryId: string, due: Date, options: { startAfter?: Date } = {}): Promise<void> {
  const job: AttemptJob = { delivery_id: deliveryId, due: due.toISOString() };
  await jobEngine(trx).send(WEBHOOK_DELIVERY_QUEUE, job, { singletonKey: deliveryId, ...(options.startAfter ? { startAfter: options.startAfter } : {}) });
}

/**
 * The delivery of an event to an endpoint, its first attempt due now; an existing delivery of the pair (unique)
 * is returned as it is. Returns the delivery's id.
 */
export async function scheduleDelivery(trx: Db, delivery: { eventId: string; endpointId: string }, now = new Date()): Promise<string> {
  const { id, created } = await upsertDelivery(trx, { event_id: delivery.eventId, endpoint_id: delivery.endpointId, at: now });
  if (created) await scheduleAttempt(trx, id, now);
  return id;
}

/**
 * One more attempt of an existing delivery, due now, with the same event (the same webhook-id): the delivery
 * becomes pending again, whatever it was. An attempt of it in flight finishes first (the endpoint's gate lets one
 * through at a time). False when there is no such delivery.
 */
export async function resendDelivery(trx: Db, deliveryId: string, now = new Date()): Promise<boolean> {
  if (!(await makeDeliveryDue(trx, deliveryId, now))) return false;
  await scheduleAttempt(trx, deliveryId, now);
  return true;
}

/**
 * Gives a job, due at its next_attempt_at, to every pending delivery that has none: deliveries made before attempts
 * were jobs, and those whose job pg-boss gave up on (its retries for want of the database ran out). A delivering
 * process does this when it starts, so a pending delivery is never left without an attempt. Two processes doing it
 * at once may both send a job for one delivery: the second finds the delivery's `due` moved on and makes no attempt.
 * Returns how many deliveries got a job.
 */
export async function adoptDeliveriesWithoutJob(db: Db): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const orphans = await listPendingDeliveriesWithoutJob(trx, WEBHOOK_DELIVERY_QUEUE);
    for (const delivery of orphans) await scheduleAttempt(trx, delivery.id, delivery.next_attempt_at, { startAfter: delivery.next_attempt_at });
    return orphans.length;
  });
}
