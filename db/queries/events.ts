// The outbox's one write: an event row, inside the transaction of the change it reports.
import type { Db } from '../connect.ts';
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
  const [row] = await executePrepared(
    trx,
    trx
      .insertInto('events')
      .values({ type: event.type, user_id: event.user_id, data: JSON.stringify(event.data), created_at: event.created_at, fanned_out_at: event.fanned_out_at })
      .returning('id'),
  );
  return row!.id;
}
