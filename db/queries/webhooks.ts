// Webhook endpoints as their owners manage them — a student's (user_id) through the API, an app's (client_id)
// through the operator CLI — and the deliveries to them. Every query of a student's endpoint is scoped to the owner,
// so another student's id reads like one that does not exist.
import type { Db } from '../connect.ts';

const ENDPOINT_COLUMNS = [
  'id',
  'url',
  'event_types',
  'description',
  'enabled',
  'disabled_reason',
  'failing_since',
  'previous_secret_expires_at',
  'created_at',
  'updated_at',
] as const;

export type EndpointRow = NonNullable<Awaited<ReturnType<typeof findEndpoint>>>;

/** Who an endpoint belongs to: a student, or an app (OAuth client). */
export type EndpointOwner = { user_id: string } | { client_id: string };

export interface NewEndpoint {
  /** Chosen before the insert: the sealed secret is bound to it. */
  id: string;
  url: string;
  event_types: string[];
  description: string;
  enabled: boolean;
  secret_sealed: string;
  /** The grant whose credential registered it (it ends with the grant: grant-artifacts.ts); null for the student's own. */
  grant_id?: string | null;
}

export interface EndpointChanges {
  url?: string;
  event_types?: string[];
  description?: string;
  enabled?: boolean;
  /** Set with a new `url`: the grant of the credential that chose it (null: the student's own). */
  grant_id?: string | null;
}

export async function listEndpoints(db: Db, userId: string) {
  return db
    .selectFrom('webhook_endpoints')
    .select(ENDPOINT_COLUMNS)
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function countEndpoints(db: Db, userId: string): Promise<number> {
  const row = await db
    .selectFrom('webhook_endpoints')
    .select((eb) => eb.fn.countAll<string | number>().as('count'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function findEndpoint(db: Db, owner: EndpointOwner, endpointId: string) {
  return db
    .selectFrom('webhook_endpoints')
    .select(ENDPOINT_COLUMNS)
    .where(ownerColumn(owner), '=', ownerId(owner))
    .where('id', '=', endpointId)
    .executeTakeFirst();
}

/** An app's one endpoint. */
export async function findClientEndpoint(db: Db, clientId: string) {
  return db
    .selectFrom('webhook_endpoints')
    .select(ENDPOINT_COLUMNS)
    .where('client_id', '=', clientId)
    .executeTakeFirst();
}

/** Holds the student's row until the transaction ends, so creates of one student count their endpoints in turn. */
export async function lockEndpointsOf(trx: Db, userId: string): Promise<void> {
  await trx.selectFrom('users').select('id').where('id', '=', userId).forNoKeyUpdate().execute();
}

export async function findEndpointSecret(db: Db, owner: EndpointOwner, endpointId: string) {
  return db
    .selectFrom('webhook_endpoints')
    .select('secret_sealed')
    .where(ownerColumn(owner), '=', ownerId(owner))
    .where('id', '=', endpointId)
    .executeTakeFirst();
}

/** The endpoint's current sealed secret, locked until the transaction ends (a rotation reads and replaces it). */
/** Every endpoint's sealed secrets, to check that a secrets key opens them all (db move-to-postgres). */
export async function listSealedEndpointSecrets(db: Db) {
  return db
    .selectFrom('webhook_endpoints')
    .select(['id', 'secret_sealed', 'previous_secret_sealed'])
    .orderBy('id')
    .execute();
}

export async function findEndpointSecretsForUpdate(db: Db, owner: EndpointOwner, endpointId: string) {
  return db
    .selectFrom('webhook_endpoints')
    .select(['id', 'secret_sealed'])
    .where(ownerColumn(owner), '=', ownerId(owner))
    .where('id', '=', endpointId)
    .forUpdate()
    .executeTakeFirst();
}

export async function insertEndpoint(db: Db, owner: EndpointOwner, endpoint: NewEndpoint, now: Date) {
  return db
    .insertInto('webhook_endpoints')
    .values({ ...owner, ...endpoint, created_at: now, updated_at: now })
    .returning(ENDPOINT_COLUMNS)
    .executeTakeFirstOrThrow();
}

/**
 * Changes the fields given. Enabling a disabled endpoint clears why it was disabled and the failing run it was disabled
 * for, so three days of failures count afresh; disabling records that the owner did it (`disabled_reason` null).
 */
export async function updateEndpoint(
  db: Db,
  owner: EndpointOwner,
  endpointId: string,
  changes: EndpointChanges,
  now: Date,
) {
  return db
    .updateTable('webhook_endpoints')
    .set((eb) => ({
      ...changes,
      ...(changes.enabled !== undefined ? { disabled_reason: null } : {}),
      // Only a disabled endpoint that is enabled starts afresh; enabling one already on keeps its failing run.
      ...(changes.enabled === true
        ? { failing_since: eb.case().when('enabled', '=', true).then(eb.ref('failing_since')).else(null).end() }
        : {}),
      updated_at: now,
    }))
    .where(ownerColumn(owner), '=', ownerId(owner))
    .where('id', '=', endpointId)
    .returning(ENDPOINT_COLUMNS)
    .executeTakeFirst();
}

/** A new current secret; the one it replaces keeps signing until `previousExpiresAt`. */
export async function replaceEndpointSecret(
  db: Db,
  owner: EndpointOwner,
  endpointId: string,
  secrets: { secret_sealed: string; previous_secret_sealed: string; previous_secret_expires_at: Date },
  now: Date,
) {
  return db
    .updateTable('webhook_endpoints')
    .set({ ...secrets, updated_at: now })
    .where(ownerColumn(owner), '=', ownerId(owner))
    .where('id', '=', endpointId)
    .returning(ENDPOINT_COLUMNS)
    .executeTakeFirstOrThrow();
}

/** Removes the endpoint; its deliveries and attempts go with it (cascade). False when there was none. */
export async function deleteEndpoint(db: Db, owner: EndpointOwner, endpointId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('webhook_endpoints')
    .where(ownerColumn(owner), '=', ownerId(owner))
    .where('id', '=', endpointId)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

const DELIVERY_COLUMNS = [
  'webhook_deliveries.id',
  'webhook_deliveries.event_id',
  'events.type as event_type',
  'webhook_deliveries.status',
  'webhook_deliveries.attempts',
  'webhook_deliveries.next_attempt_at',
  'webhook_deliveries.succeeded_at',
  'webhook_deliveries.created_at',
] as const;

export type DeliveryRow = NonNullable<Awaited<ReturnType<typeof findDelivery>>>;

/** Deliveries to one endpoint, newest first, each with its latest attempt; one row more than `limit`. */
export async function listDeliveries(
  db: Db,
  endpointId: string,
  options: { limit: number; before?: { at: Date; id: string } },
) {
  let query = deliveries(db).where('webhook_deliveries.endpoint_id', '=', endpointId);
  if (options.before) {
    const { at, id } = options.before;
    query = query.where((eb) =>
      eb(eb.refTuple('webhook_deliveries.created_at', 'webhook_deliveries.id'), '<', eb.tuple(at, id)),
    );
  }
  return query
    .orderBy('webhook_deliveries.created_at', 'desc')
    .orderBy('webhook_deliveries.id', 'desc')
    .limit(options.limit + 1)
    .execute();
}

export async function findDelivery(db: Db, endpointId: string, deliveryId: string) {
  return deliveries(db)
    .where('webhook_deliveries.endpoint_id', '=', endpointId)
    .where('webhook_deliveries.id', '=', deliveryId)
    .executeTakeFirst();
}

/** Deliveries with their event's kind and their latest attempt (a lateral join: one attempt row at most). */
function deliveries(db: Db) {
  return db
    .selectFrom('webhook_deliveries')
    .innerJoin('events', 'events.id', 'webhook_deliveries.event_id')
    .leftJoinLateral(
      (eb) =>
        eb
          .selectFrom('webhook_attempts')
          .select(['started_at', 'duration_ms', 'response_status', 'error'])
          .whereRef('webhook_attempts.delivery_id', '=', 'webhook_deliveries.id')
          .orderBy('started_at', 'desc')
          .limit(1)
          .as('last_attempt'),
      (join) => join.onTrue(),
    )
    .select(DELIVERY_COLUMNS)
    .select([
      'last_attempt.started_at as last_attempt_started_at',
      'last_attempt.duration_ms as last_attempt_duration_ms',
      'last_attempt.response_status as last_attempt_response_status',
      'last_attempt.error as last_attempt_error',
    ]);
}

const ownerColumn = (owner: EndpointOwner) => ('user_id' in owner ? 'user_id' : 'client_id');
const ownerId = (owner: EndpointOwner) => ('user_id' in owner ? owner.user_id : owner.client_id);
