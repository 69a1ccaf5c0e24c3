// Webhook delivery: the fan-out of events to endpoints, deliveries (their attempts are jobs of the job engine:
// services/webhooks/queue.ts), attempts and their outcomes.
import { sql } from 'kysely';
import type { Db } from '../connect.ts';

/** Events not yet fanned out, oldest first, locked for this transaction (another process skips them). */
export async function lockEventsToFanOut(trx: Db, limit: number) {
  return trx
    .selectFrom('events')
    .select(['id', 'type', 'user_id'])
    .where('fanned_out_at', 'is', null)
    .orderBy('created_at')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();
}

export async function markFannedOut(trx: Db, eventIds: string[], at: Date): Promise<void> {
  if (eventIds.length === 0) return;
  await trx.updateTable('events').set({ fanned_out_at: at }).where('id', 'in', eventIds).execute();
}

/**
 * The endpoints each event of a batch goes to, as (event, endpoint) pairs in the batch's order: the student's own
 * enabled endpoints subscribed to its kind, and the endpoint of every app (OAuth client) whose live grant from the
 * student holds the event's read scope. One statement per batch, not one per event: fan-out runs beside every write
 * that emits an event, and a query per event cost as much as the write's own insert.
 */
export async function endpointsForEvents(trx: Db, events: Array<{ id: string; type: string; user_id: string; read_scope: string }>) {
  if (events.length === 0) return [];
  // The batch travels as one JSON parameter (arrays of uuids are not parameters both drivers bind alike).
  const batch = JSON.stringify(events.map((event, n) => ({ ...event, n })));
  // Two joins, one per kind of owner (an endpoint has one), rather than one join with an OR: each reaches the
  // endpoints by an index, and the plan stays cheap. With an OR, and no statistics on these small tables (autovacuum
  // rarely analyzes them), PostgreSQL costed a subplan per event and endpoint past jit_above_cost and compiled the
  // statement with LLVM on every fan-out: milliseconds of CPU for a statement that runs in a tenth of one. Keep the
  // plan's estimated cost under jit_above_cost when changing this query (EXPLAIN shows it).
  const { rows } = await sql<{ event_id: string; endpoint_id: string }>`
    with ev as (select * from jsonb_to_recordset(${batch}::jsonb) as ev(id uuid, type text, user_id uuid, read_scope text, n int))
    select event_id, endpoint_id from (
      select ev.id as event_id, e.id as endpoint_id, ev.n
      from ev join webhook_endpoints as e on e.user_id = ev.user_id and e.enabled and ev.type = any(e.event_types)
      union
      select ev.id, e.id, ev.n
      from ev
      join oauth_grants as g on g.user_id = ev.user_id and g.revoked_at is null and ev.read_scope = any(g.scopes)
      join webhook_endpoints as e on e.client_id = g.client_id and e.enabled and ev.type = any(e.event_types)
    ) as pairs
    order by n, endpoint_id`.execute(trx);
  return rows;
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
export async function upsertDelivery(trx: Db, delivery: { id?: string; event_id: string; endpoint_id: string; at: Date }): Promise<{ id: string; created: boolean }> {
  const inserted = await trx
    .insertInto('webhook_deliveries')
    .values({ ...(delivery.id ? { id: delivery.id } : {}), event_id: delivery.event_id, endpoint_id: delivery.endpoint_id, status: 'pending', next_attempt_at: delivery.at, created_at: delivery.at })
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
  const row = await trx.updateTable('webhook_deliveries').set({ status: 'pending', next_attempt_at: at }).where('id', '=', deliveryId).returning('id').executeTakeFirst();
  return row !== undefined;
}

/** Whether the delivery still waits for the attempt that was due at `due` (pending, next_attempt_at = due). */
export async function attemptStillDue(db: Db, deliveryId: string, due: Date): Promise<boolean> {
  const row = await db.selectFrom('webhook_deliveries').select('id').where('id', '=', deliveryId).where('status', '=', 'pending').where('next_attempt_at', '=', due).executeTakeFirst();
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
  await trx.updateTable('webhook_endpoints').set({ failing_since: null }).where('id', '=', endpointId).where('failing_since', 'is not', null).execute();
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
  await trx.updateTable('webhook_endpoints').set({ enabled: false, disabled_reason: 'failing', updated_at: at }).where('id', '=', endpointId).execute();
  await trx.updateTable('webhook_deliveries').set({ status: 'failed', next_attempt_at: null }).where('endpoint_id', '=', endpointId).where('status', '=', 'pending').execute();
}
