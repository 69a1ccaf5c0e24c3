// The outbox's one write: an event row, inside the transaction of the change it reports.
import { sql, type QueryCreator } from 'kysely';
import type { Db } from '../connect.ts';
import type { Database } from '../schema.ts';
import { executePrepared } from '../prepared-statements.ts';

export interface NewEvent {
  type: string;
  user_id: string;
  data: unknown;
  created_at: Date;
  /** Null: the fan-out sends it to every endpoint that wants it. */
  fanned_out_at: Date | null;
}

export async function insertEvent(trx: Db, event: NewEvent): Promise<string> {
  const [row] = await executePrepared(trx, trx.insertInto('events').values(eventValues(event)).returning('id'));
  return row!.id;
}

/**
 * The insert of `events` (any number, none included) for a write's own statement to carry as a CTE, so that its
 * outbox rows cost no round trip: one parameter, so the statement's text is the same for any number of events.
 */
export function insertEvents<DB extends Database>(qc: QueryCreator<DB>, events: readonly NewEvent[]) {
  // As JSON, each event's data is a value of its own, as eventValues' JSON text is for a single insert.
  const rows = JSON.stringify(events.map(({ type, user_id, data, created_at, fanned_out_at }) => ({ type, user_id, data, created_at, fanned_out_at })));
  return qc
    .insertInto('events')
    .columns(['type', 'user_id', 'data', 'created_at', 'fanned_out_at'])
    .expression(sql`select type, user_id, data, created_at, fanned_out_at from jsonb_populate_recordset(null::events, ${rows}::jsonb)`);
}

function eventValues(event: NewEvent) {
  return { type: event.type, user_id: event.user_id, data: JSON.stringify(event.data), created_at: event.created_at, fanned_out_at: event.fanned_out_at };
}
