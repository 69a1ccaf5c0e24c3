// Webhook delivery: the fan-out of events to endpoints, deliveries (their attempts are jobs of the job engine:
// services/webhooks/queue.ts), attempts and their outcomes.
import { sql } from 'kysely';
import type { Db } from '../connect.ts';
import { executePrepared } from '../prepared-statements.ts';

/** An event kind's resource (what comes before its dot) -> the read scope an app's grant needs to receive it. */
export type ReadScopes = Readonly<Record<string, string>>;

/** What one fan-out statement did: the events it handled, and the deliveries it made (in the events' order). */
export interface FanOut {
  events: number;
  /** Each with its endpoint's owner: a student's (`user_id`) or an app's (`client_id`); the other is null. */
  deliveries: Array<{ event_id: string; endpoint_id: string; user_id: string | null; client_id: string | null }>;
}

/**
 * Fans out up to `limit` events, oldest first, in one statement (atomic on its own): locks them (SKIP LOCKED, so
 * processes fanning out at once share the work), marks them fanned out, and makes one pending delivery, due at `at`,
 * per endpoint each goes to: the student's own enabled endpoints subscribed to its kind, and the endpoint of every app
 * whose live grant from the student holds the kind's read scope. A delivery that exists already is kept as it is.
 * The relay runs this on every pass, beside every write that emits an event: as one named statement it is planned once
 * per connection and costs one round trip, where locking, routing, marking and a delivery each were a statement (and
 * the routing planned anew each time).
 */
export async function fanOutEvents(
  db: Db,
  options: { limit: number; at: Date; readScopes: ReadScopes },
): Promise<FanOut> {
  // The limit is part of the text: a parameter's generic plan would assume a tenth of the outbox.
  const limit = sql.lit(Math.trunc(options.limit));
  // Two joins, one per kind of owner (an endpoint has one), rather than one join with an OR: each reaches the
  // endpoints by an index, and the plan stays cheap. With an OR, and no statistics on these small tables (autovacuum
  // rarely analyzes them), PostgreSQL costed a subplan per event and endpoint past jit_above_cost and compiled the
  // statement with LLVM on every fan-out: milliseconds of CPU for a statement that runs in a tenth of one. Keep the
  // plan's estimated cost under jit_above_cost when changing this query (EXPLAIN shows it).
  const [row] = await executePrepared(
    db,
    sql<FanOut>`
    with ev as (
      select id, type, user_id, created_at, (${JSON.stringify(options.readScopes)}::jsonb ->> split_part(type, '.', 1)) as read_scope
      from events where fanned_out_at is null order by created_at limit ${limit} for update skip locked
    ),
    marked as (update events set fanned_out_at = ${options.at} from ev where events.id = ev.id returning events.id),
    pairs as (
      select ev.id as event_id, e.id as endpoint_id
      from ev join webhook_endpoints as e on e.user_id = ev.user_id and e.enabled and ev.type = any(e.event_types)
      union
      select ev.id, e.id
      from ev
      join oauth_grants as g on g.user_id = ev.user_id and g.revoked_at is null and ev.read_scope = any(g.scopes)
      join webhook_endpoints as e on e.client_id = g.client_id and e.enabled and ev.type = any(e.event_types)
    ),
    made as (
      insert into webhook_deliveries (event_id, endpoint_id, status, next_attempt_at, created_at)
      select event_id, endpoint_id, 'pending', ${options.at}, ${options.at} from pairs
      on conflict (event_id, endpoint_id) do nothing
      returning event_id, endpoint_id
    )
    select
      (select count(*) from marked)::int as events,
      coalesce((
        select json_agg(
          json_build_object('event_id', made.event_id, 'endpoint_id', made.endpoint_id, 'user_id', e.user_id, 'client_id', e.client_id)
          order by ev.created_at, ev.id, made.endpoint_id
        )
        from made join ev on ev.id = made.event_id join webhook_endpoints as e on e.id = made.endpoint_id
      ), '[]'::json) as deliveries`,
  );
  return row!;
}

/** Whether an app still has a live grant from the student that holds `readScope` (checked before each attempt). */
export async function appMayReceive(db: Db, clientId: string, userId: string, readScope: string): Promise<boolean> {
  const row = await db
    .selectFrom('oauth_grants')
    .select('id')
    .where('client_id', '=', clientId)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .where(sql<boolean>`${readScope} = any(scopes)`)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * The delivery of an event to an endpoint, created pending and due at `at`, or the one that exists already. `id` is
 * chosen by the caller only for a record that must have a known id (the demo student's).
 */
export async function upsertDelivery(
  trx: Db,
  delivery: { id?: string; event_id: string; endpoint_id: string; at: Date },
): Promise<{ id: string; created: boolean }> {
  const inserted = await trx
    .insertInto('webhook_deliveries')
    .values({
      ...(delivery.id ? { id: delivery.id } : {}),
      event_id: delivery.event_id,
      endpoint_id: delivery.endpoint_id,
      status: 'pending',
      next_attempt_at: delivery.at,
      created_at: delivery.at,
    })
    .onConflict((oc) => oc.columns(['event_id', 'endpoint_id']).doNothing())
    .returning('id')
    .executeTakeFirst();
  if (inserted) return { id: inserted.id, created: true };
  const existing = await trx
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('event_id', '=', delivery.event_id)
    .where('endpoint_id', '=', delivery.endpoint_id)
    .executeTakeFirstOrThrow();
  return { id: existing.id, created: false };
}

/** Makes a delivery pending again, due at `at`; false when there is no such delivery. */
export async function makeDeliveryDue(trx: Db, deliveryId: string, at: Date): Promise<boolean> {
  const row = await trx
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', next_attempt_at: at })
    .where('id', '=', deliveryId)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** Whether the delivery still waits for the attempt that was due at `due` (pending, next_attempt_at = due). */
export async function attemptStillDue(db: Db, deliveryId: string, due: Date): Promise<boolean> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('id', '=', deliveryId)
    .where('status', '=', 'pending')
    .where('next_attempt_at', '=', due)
    .executeTakeFirst();
  return row !== undefined;
}

/** What an attempt needs: the delivery, its event and its endpoint. */
export async function findDeliveryForAttempt(db: Db, deliveryId: string) {
  return db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('events as ev', 'ev.id', 'd.event_id')
    .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .select([
      'd.id',
      'd.status',
      'd.attempts',
      'd.next_attempt_at',
      'ev.id as event_id',
      'ev.type as event_type',
      'ev.user_id as event_user_id',
      'ev.data as event_data',
      'ev.created_at as event_created_at',
      'e.id as endpoint_id',
      'e.url',
      'e.user_id as endpoint_user_id',
      'e.client_id as endpoint_client_id',
      'e.enabled',
      'e.secret_sealed',
      'e.previous_secret_sealed',
      'e.previous_secret_expires_at',
      'e.failing_since',
    ])
    .where('d.id', '=', deliveryId)
    .executeTakeFirst();
}

export interface AttemptRecord {
  delivery_id: string;
  started_at: Date;
  duration_ms: number;
  response_status: number | null;
  error: string | null;
}

export async function insertAttempt(trx: Db, attempt: AttemptRecord): Promise<void> {
  await trx.insertInto('webhook_attempts').values(attempt).execute();
}

/** An attempt was made: counted, whatever became of the delivery meanwhile. */
export async function countAttempt(trx: Db, deliveryId: string, at: Date): Promise<void> {
  await trx
    .updateTable('webhook_deliveries')
    .set((eb) => ({ attempts: eb('attempts', '+', 1), last_attempt_at: at }))
    .where('id', '=', deliveryId)
    .execute();
}

/**
 * The delivery's new state after the attempt that was due at `due`, only while that attempt is still the one the
 * delivery waits for (pending, next_attempt_at = due): one re-sent or given up meanwhile keeps its state. False
 * when it was superseded.
 */
export async function finishDelivery(
  trx: Db,
  attempt: { id: string; due: Date },
  outcome: { status: 'pending' | 'succeeded' | 'failed'; next_attempt_at: Date | null; succeeded_at: Date | null },
): Promise<boolean> {
  const row = await trx
    .updateTable('webhook_deliveries')
    .set(outcome)
    .where('id', '=', attempt.id)
    .where('status', '=', 'pending')
    .where('next_attempt_at', '=', attempt.due)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** After a 2xx: the endpoint is no longer failing. */
export async function clearEndpointFailing(trx: Db, endpointId: string): Promise<void> {
  await trx
    .updateTable('webhook_endpoints')
    .set({ failing_since: null })
    .where('id', '=', endpointId)
    .where('failing_since', 'is not', null)
    .execute();
}

/** After a failed attempt: the start of the endpoint's run of failures (kept if it had started already). */
export async function markEndpointFailing(trx: Db, endpointId: string, at: Date): Promise<Date> {
  const row = await trx
    .updateTable('webhook_endpoints')
    .set((eb) => ({ failing_since: eb.fn.coalesce('failing_since', eb.val(at)) }))
    .where('id', '=', endpointId)
    .returning('failing_since')
    .executeTakeFirstOrThrow();
  return row.failing_since!;
}

/** Delivery gave up on the endpoint: disabled (its owner re-enables it) and its pending deliveries failed. */
export async function disableFailingEndpoint(trx: Db, endpointId: string, at: Date): Promise<void> {
  await trx
    .updateTable('webhook_endpoints')
    .set({ enabled: false, disabled_reason: 'failing', updated_at: at })
    .where('id', '=', endpointId)
    .execute();
  await trx
    .updateTable('webhook_deliveries')
    .set({ status: 'failed', next_attempt_at: null })
    .where('endpoint_id', '=', endpointId)
    .where('status', '=', 'pending')
    .execute();
}
