// Scheduling webhook deliveries. The queue is the webhook_deliveries table itself, in the database of record: a
// delivery is scheduled by the write that creates or updates its row, inside the caller's transaction, so an
// attempt is scheduled exactly when the change that calls for it commits, on PostgreSQL and on the embedded
// database alike. Workers (server/webhooks/worker.ts) claim due rows with a lease (SKIP LOCKED), so two processes
// never make the same attempt, and a process killed mid-attempt leaves a row that falls due again.
//
// A delivery's status:
//   pending    an attempt is due at next_attempt_at (or running, under a lease that ends then);
//   succeeded  the endpoint answered 2xx (succeeded_at); nothing more is sent unless it is re-sent;
//   failed     delivery gave up: the retries ran out, the endpoint was disabled (by its owner, or after three
//              days of failures) or the app's grant no longer covers the event. A re-send makes it pending again.
import type { Db } from '../../db/connect.ts';
import { makeDeliveryDue, upsertDelivery } from '../../db/queries/deliveries.ts';

/**
 * The delivery of an event to an endpoint, its first attempt due now; an existing delivery of the pair (unique)
 * is returned as it is. Returns the delivery's id.
 */
export async function scheduleDelivery(trx: Db, delivery: { eventId: string; endpointId: string }, now = new Date()): Promise<string> {
  return (await upsertDelivery(trx, { event_id: delivery.eventId, endpoint_id: delivery.endpointId, at: now })).id;
}

/**
 * One more attempt of an existing delivery, due now, with the same event (the same webhook-id): the delivery
 * becomes pending again, whatever it was. False when there is no such delivery.
 */
export async function resendDelivery(trx: Db, deliveryId: string, now = new Date()): Promise<boolean> {
  return makeDeliveryDue(trx, deliveryId, now);
}
