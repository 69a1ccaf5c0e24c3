// From the outbox to deliveries: each event not yet fanned out gets one delivery per endpoint that wants it (the
// student's own subscribed endpoints, and the endpoints of apps whose live grant holds the event's read scope), in one
// statement that also marks the event fanned out (db/queries/deliveries.ts fanOutEvents). The events are locked with
// SKIP LOCKED, so processes fanning out at once share the work; a statement that fails leaves its events for the
// next pass. Nothing is lost and nothing is fanned out twice. The deliveries wait parked until a sweep gives them
// jobs (queue.ts).
import type { Db } from '../../db/connect.ts';
import { fanOutEvents, type FanOut } from '../../db/queries/deliveries.ts';
import { READ_SCOPES } from '../events/read-scopes.ts';

/** Events one pass fans out; a full batch is followed by another pass at once. */
export const FAN_OUT_BATCH = 100;

/** Fans out the oldest batch of events waiting; `events` equal to FAN_OUT_BATCH means more may be waiting. */
export function fanOutBatch(db: Db, now = new Date()): Promise<FanOut> {
  return fanOutEvents(db, { limit: FAN_OUT_BATCH, at: now, readScopes: READ_SCOPES });
}
