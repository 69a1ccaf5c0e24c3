// The outbox: its writes (event rows, inside the transaction of the change they report, alone or as a CTE of the
// write's own statement), the changes feed's read of it, and the purge of events past their retention.
import { sql, type QueryCreator, type RawBuilder } from 'kysely';
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
  const [row] = await executePrepared(trx, insertEvents(trx, eventRows([event])).returning('id'));
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
 * statement's text is the same for any number of events (a single insert, insertEvent, takes them so too).
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

/**
 * The insert of eventRows' `rows` for a write's own statement to carry as a CTE, so its outbox rows cost no round trip.
 * A row no webhook endpoint can receive is stored fanned out already, at its own instant: its student has no enabled
 * endpoint subscribed to its kind and no live grant to an app with one (the fan-out's two routes,
 * db/queries/deliveries.ts, without the app's read scope, so a row that might be sent always waits for the fan-out).
 * It then wakes no relay (the outbox trigger passes by fanned-out rows, migration 20261207_0301) and is never written
 * a second time. Two index probes (webhook_endpoints_user, oauth_grants_user); an endpoint that commits while the
 * write runs gets the events written after it, as one created a moment later would. `onlyIf`: a condition of the
 * statement (a graded review's gate) without which no row is inserted.
 */
export function insertEvents<DB extends Database>(qc: QueryCreator<DB>, rows: string, onlyIf?: RawBuilder<boolean>) {
  return qc
    .insertInto('events')
    .columns(['type', 'user_id', 'data', 'created_at', 'fanned_out_at'])
    .expression(
      sql`select r.type, r.user_id, r.data, r.created_at,
        coalesce(r.fanned_out_at, case when ${receivable(sql`r.user_id`, sql`r.type`)} then null else r.created_at end)
      from jsonb_populate_recordset(null::events, ${rows}::jsonb) as r${onlyIf ? sql` where ${onlyIf}` : sql``}`,
    );
}

/** Whether some enabled webhook endpoint may be sent events of kind `type` of the student `userId` (columns or values). */
function receivable(userId: RawBuilder<unknown>, type: RawBuilder<unknown>) {
  return sql<boolean>`(exists (
      select from webhook_endpoints as e where e.user_id = ${userId} and e.enabled and ${type} = any(e.event_types)
    )
    or exists (
      select from oauth_grants as g
      join webhook_endpoints as e on e.client_id = g.client_id and e.enabled and ${type} = any(e.event_types)
      where g.user_id = ${userId} and g.revoked_at is null
    ))`;
}
