// The one way the service says that something happened. Emitting code calls `emitEvent` inside the transaction that
// makes the change, so the event commits with the change or not at all (an outbox); it never knows who listens.
// Delivery to webhook endpoints happens later, from the stored row.
import type { Db } from '../../db/connect.ts';
import { eventRows, insertEvent, insertEvents, type NewEvent } from '../../db/queries/events.ts';
import type { webhooks } from '../../generated/general/types.ts';

/** Every event kind, as named in the spec's `webhooks` section. */
export type EventType = keyof webhooks;
/** The whole payload of one kind, as the spec describes it. */
export type EventOf<T extends EventType> = webhooks[T]['post']['requestBody']['content']['application/json'];
export type EventData<T extends EventType> = EventOf<T>['data'];

export interface EmittedEvent<T extends EventType> {
  type: T;
  /** The student whose data changed. */
  studentId: string;
  data: EventData<T>;
  /** When the change happened: the same instant the change itself records. */
  at: Date;
  /** Sent only where the caller schedules it (a test to one endpoint): stored as fanned out already, so the fan-out passes it by. */
  direct?: boolean;
}

/** Stores the event in the caller's transaction; returns its id (the envelope's `id` and the `webhook-id`). */
export async function emitEvent<T extends EventType>(trx: Db, event: EmittedEvent<T>): Promise<string> {
  return insertEvent(trx, outboxRow(event));
}

/** Stores several events in one statement in the caller's transaction (a batch of cards: one round trip, not one each). */
export async function emitEvents<T extends EventType>(trx: Db, events: readonly EmittedEvent<T>[]): Promise<void> {
  if (events.length > 0) await insertEvents(trx, eventRows(events.map(outboxRow))).execute();
}

/** The event's outbox row, for a write that stores it in the change's own statement (as insertTaskRow does). */
export function outboxRow<T extends EventType>(event: EmittedEvent<T>): NewEvent {
  return {
    type: event.type,
    user_id: event.studentId,
    data: event.data,
    created_at: event.at,
    fanned_out_at: event.direct ? event.at : null,
  };
}

/** The envelope a receiver gets, from a stored event. */
export function envelopeOf(row: {
  id: string;
  type: string;
  user_id: string;
  data: unknown;
  created_at: Date;
}): EventOf<EventType> {
  return {
    id: row.id,
    type: row.type,
    created_at: row.created_at.toISOString(),
    student_id: row.user_id,
    data: row.data,
  } as EventOf<EventType>;
}
