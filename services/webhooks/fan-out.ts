// From the outbox to deliveries: each event not yet fanned out gets one delivery per endpoint that wants it (the
// student's own subscribed endpoints, and the endpoints of apps whose live grant holds the event's read scope), in one
// statement that also marks the event fanned out (db/queries/deliveries.ts fanOutEvents). The events are locked with
// SKIP LOCKED, so processes fanning out at once share the work; a statement that fails leaves its events for the
// next pass. Nothing is lost and nothing is fanned out twice. The deliveries wait parked until a sweep gives them
// jobs (queue.ts).
import type { Db } from '../../db/connect.ts';
import { fanOutEvents, type FanOut } from '../../db/queries/deliveries.ts';
import type { GateAccount } from '../../db/queries/endpoint-gates.ts';
import { READ_SCOPES } from '../events/read-scopes.ts';
import { sweepParkedDeliveries, type DispatchOptions } from './queue.ts';
import type { RelayPass } from './relay.ts';

/** Events one pass fans out; a full batch is followed by another pass at once. */
const FAN_OUT_BATCH = 100;

/** Fans out the oldest batch of events waiting; `events` equal to FAN_OUT_BATCH means more may be waiting. */
export function fanOutBatch(db: Db, now = new Date()): Promise<FanOut> {
  return fanOutEvents(db, { limit: FAN_OUT_BATCH, at: now, readScopes: READ_SCOPES });
}

/**
 * One pass of the relay (relay.ts): a batch fanned out, then the sweep of parked deliveries (queue.ts), which
 * dispatches the accounts the batch made deliveries for under their locks. Again at once after a full batch.
 */
export async function relayPass(db: Db, sweep: Omit<DispatchOptions, 'now'>): Promise<RelayPass> {
  const fanned = await fanOutBatch(db);
  const swept = await sweepParkedDeliveries(db, { ...sweep, fannedOut: accountsOf(fanned.deliveries) });
  return { more: fanned.events === FAN_OUT_BATCH || swept.more, sent: swept.sent };
}

/** The accounts whose endpoints a fan-out made deliveries for. */
function accountsOf(deliveries: FanOut['deliveries']): GateAccount[] {
  return deliveries.map((delivery) =>
    delivery.user_id !== null ? { user_id: delivery.user_id } : { client_id: delivery.client_id! },
  );
}
