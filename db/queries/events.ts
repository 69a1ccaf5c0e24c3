// The outbox: its writes (event rows, inside the transaction of the change they report, alone or as a CTE of the
// write's own statement), the changes feed's read of it, and the purge of events past their retention.
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

/** A place in the changes feed: after the events of transaction `txid` up to its `seq`-th row (`seq` 0: before them). */
export interface FeedPosition {
  txid: string;
  seq: number;
}

export interface FeedRow {
  id: string;
  type: string;
  user_id: string;
  data: unknown;
  created_at: Date;
  txid: string;
  seq: number;
}

/**
 * One page of a student's events of `types` after `after`, in commit order (migration 20261127_0901), and the horizon
 * the page was read at: the oldest transaction still running, before which every event is final. Both come from one
 * statement, hence one snapshot, so the horizon never passes an event the page could not see.
 */
export async function listFeedEvents(
  db: Db,
  userId: string,
  options: { types: readonly string[]; after: FeedPosition | undefined; limit: number },
) {
  const after = options.after ?? { txid: '0', seq: 0 };
  const { rows } = await sql<{ horizon: string } & { [K in keyof FeedRow]: FeedRow[K] | null }>`
    select h.xmin::text as horizon, e.id, e.type, e.user_id, e.data, e.created_at, e.txid, e.seq
    from (select pg_snapshot_xmin(pg_current_snapshot()) as xmin) h
    left join lateral (
      select id, type, user_id, data, created_at, txid::text as txid, seq from events
      where user_id = ${userId} and type = any(${[...options.types]}::text[]) and txid < h.xmin
        and (txid, seq) > (${after.txid}::xid8, ${after.seq}::bigint)
      order by events.txid, events.seq
      limit ${options.limit}
    ) e on true`.execute(db);
  const horizon = rows[0]!.horizon;
  return { horizon, rows: rows.filter((row) => row.id !== null) as unknown as FeedRow[] };
}

/** Deletes up to `batch` events stamped before `before` (their deliveries go with them); returns how many went. */
export async function deleteEventsBefore(db: Db, before: Date, batch: number): Promise<number> {
  const result = await db
    .deleteFrom('events')
    .where('id', 'in', (qb) => qb.selectFrom('events').select('id').where('created_at', '<', before).limit(batch))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * The outbox rows of `events` (any number, none included) as insertEvents takes them: one JSON value, so the
 * statement's text is the same for any number of events. As JSON, each event's data is a value of its own, as
 * eventValues' JSON text is for a single insert.
 */
export function eventRows(events: readonly NewEvent[]): string {
  return JSON.stringify(
    events.map(({ type, user_id, data, created_at, fanned_out_at }) => ({
      type,
      user_id,
      data,
      created_at,
      fanned_out_at,
    })),
  );
}

/** The insert of eventRows' `rows` for a write's own statement to carry as a CTE, so its outbox rows cost no round trip. */
export function insertEvents<DB extends Database>(qc: QueryCreator<DB>, rows: string) {
  return qc
    .insertInto('events')
    .columns(['type', 'user_id', 'data', 'created_at', 'fanned_out_at'])
    .expression(
      sql`select type, user_id, data, created_at, fanned_out_at from jsonb_populate_recordset(null::events, ${rows}::jsonb)`,
    );
}

function eventValues(event: NewEvent) {
  return {
    type: event.type,
    user_id: event.user_id,
    data: JSON.stringify(event.data),
    created_at: event.created_at,
    fanned_out_at: event.fanned_out_at,
  };
}
