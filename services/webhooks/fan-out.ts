// From the outbox to deliveries: each event not yet fanned out gets one delivery per endpoint that wants it
// (db/queries/deliveries.ts endpointsForEvents: the student's own subscribed endpoints, and the endpoints of apps
// whose live grant holds the event's read scope), in one transaction that also marks the event fanned out. The
// events are locked with SKIP LOCKED, so processes fanning out at once share the work; a process that dies
// mid-way rolls back and the events wait for the next pass. Nothing is lost and nothing is fanned out twice.
import type { Db } from '../../db/connect.ts';
import { endpointsForEvents, lockEventsToFanOut, markFannedOut } from '../../db/queries/deliveries.ts';
import { scheduleDelivery } from './queue.ts';
import type { EventType } from '../events/emit.ts';
import { readScopeOf } from '../events/read-scopes.ts';

const BATCH = 100;

/** Fans out one batch of events; returns how many events it handled (BATCH means more may be waiting). */
export async function fanOutEvents(db: Db, now = new Date()): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const events = await lockEventsToFanOut(trx, BATCH);
    const targets = await endpointsForEvents(
      trx,
      events.map((event) => ({ ...event, read_scope: readScopeOf(event.type as EventType) })),
    );
    for (const { event_id, endpoint_id } of targets) await scheduleDelivery(trx, { eventId: event_id, endpointId: endpoint_id }, now);
    await markFannedOut(
      trx,
      events.map((event) => event.id),
      now,
    );
    return events.length;
  });
}
