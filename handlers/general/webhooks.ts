// A student's webhook endpoints (after Stripe's and GitHub's): register, list, change, remove, rotate the signing
// secret, send a test, see deliveries and re-send one. A secret is shown only when it is made; it is stored sealed
// (services/webhooks/secrets.ts) and delivery (services/webhooks/) signs with it.
import { studentTransaction } from '../../db/student-transaction.ts';
import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/connect.ts';
import {
  countEndpoints,
  deleteEndpoint,
  findDelivery,
  findEndpoint,
  findEndpointSecret,
  insertEndpoint,
  listDeliveries,
  listEndpoints,
  lockEndpointsOf,
  updateEndpoint,
  type DeliveryRow,
  type EndpointOwner,
  type EndpointRow,
} from '../../db/queries/webhooks.ts';
import { emitEvent, type EventType } from '../../services/events/emit.ts';
import { readScopesOf } from '../../services/events/read-scopes.ts';
import { lockLiveGrant } from '../../db/queries/oauth.ts';
import type { GeneralPrincipal } from '../../server/auth/principal.ts';
import { REALM, requireScopes } from '../../server/auth/scopes.ts';
import { endpointStatus, rotateSecret } from '../../services/webhooks/endpoints.ts';
import type { WebhookEndpointSettings } from '../../services/webhooks/endpoint-settings.ts';
import { problems } from '../../server/http/problems.ts';
import { resendDelivery, scheduleDelivery } from '../../services/webhooks/queue.ts';
import { createWebhookSecret, openEndpointSecret, sealEndpointSecret } from '../../services/webhooks/secrets.ts';
import { assertDeliverableUrl, UndeliverableUrlError, type TargetOptions } from '../../services/webhooks/target-address.ts';
import { page, timeIdCursor } from '../../server/contract/cursor.ts';
import { idempotently } from '../../server/http/idempotency.ts';
import type { GeneralHandlers, Schemas } from './types.ts';

/** Endpoints per student: enough for a few integrations, few enough that one change fans out to a handful. */
export const MAX_ENDPOINTS_PER_STUDENT = 10;

const NO_STORE = { 'Cache-Control': 'no-store' };
const noEndpoint = () => problems.notFound('You have no webhook endpoint with this id.');

export const listWebhookEndpoints: GeneralHandlers['listWebhookEndpoints'] = async ({ principal }, { db }) => {
  const rows = await listEndpoints(db, principal.user_id);
  return { status: 200, body: { data: rows.map(endpointBody) } };
};

export const createWebhookEndpoint: GeneralHandlers['createWebhookEndpoint'] = async ({ headers, body, principal }, context) => {
  const { db, now } = context;
  const { secrets, targets } = context.webhooks;
  const at = now();
  const owner = { user_id: principal.user_id };
  requireScopes(principal, readScopesOf(body.event_types));
  await assertUrl(body.url, targets);
  // The response stored for an Idempotency-Key never holds the secret (it would lie there in the clear for a day):
  // the secret is added from its sealed column to the first answer and to every replay alike.
  const request = { userId: principal.user_id, key: headers['Idempotency-Key'], operationId: 'createWebhookEndpoint', body, now: at };
  const created = await idempotently(db, request, async (trx): Promise<{ status: 201; body: Schemas['WebhookEndpoint']; headers?: Record<string, string> }> => {
    // Two creates at once must not both see nine endpoints.
    await lockEndpointsOf(trx, principal.user_id);
    const grant_id = await liveGrantOf(trx, principal);
    if ((await countEndpoints(trx, principal.user_id)) >= MAX_ENDPOINTS_PER_STUDENT) throw problems.endpointLimitReached(MAX_ENDPOINTS_PER_STUDENT);
    const id = randomUUID();
    const secret_sealed = sealEndpointSecret(secrets, id, createWebhookSecret());
    const fields = { id, url: body.url, event_types: body.event_types, description: body.description ?? '', enabled: body.enabled ?? true, secret_sealed, grant_id };
    const row = await insertEndpoint(trx, owner, fields, at);
    return { status: 201, body: endpointBody(row) };
  });
  const secret = await currentSecret(db, secrets, owner, created.body.id);
  return { ...created, body: { ...created.body, secret }, headers: { ...created.headers, ...NO_STORE } };
};

export const getWebhookEndpoint: GeneralHandlers['getWebhookEndpoint'] = async ({ path, principal }, { db }) => {
  const row = await findEndpoint(db, { user_id: principal.user_id }, path.endpoint_id);
  if (!row) throw noEndpoint();
  return { status: 200, body: endpointBody(row) };
};

export const updateWebhookEndpoint: GeneralHandlers['updateWebhookEndpoint'] = async ({ path, body, principal }, context) => {
  const { targets } = context.webhooks;
  if (body.event_types) requireScopes(principal, readScopesOf(body.event_types));
  if (body.url !== undefined) await assertUrl(body.url, targets);
  const row = await context.db.transaction().execute(async (trx) => {
    // Whoever chooses where an endpoint sends owns it: a new URL set through an app's grant ends with that grant (an
    // app cannot point the student's own endpoint at itself and keep it past revocation); set with the student's
    // own key, it is the student's again.
    const changes = body.url === undefined ? body : { ...body, grant_id: await liveGrantOf(trx, principal) };
    return updateEndpoint(trx, { user_id: principal.user_id }, path.endpoint_id, changes, context.now());
  });
  if (!row) throw noEndpoint();
  return { status: 200, body: endpointBody(row) };
};

export const deleteWebhookEndpoint: GeneralHandlers['deleteWebhookEndpoint'] = async ({ path, principal }, { db }) => {
  if (!(await deleteEndpoint(db, { user_id: principal.user_id }, path.endpoint_id))) throw noEndpoint();
  return { status: 204, body: undefined };
};

export const rotateWebhookEndpointSecret: GeneralHandlers['rotateWebhookEndpointSecret'] = async ({ path, principal }, context) => {
  const { secrets } = context.webhooks;
  const { row, secret } = await rotateSecret(context.db, secrets, { user_id: principal.user_id }, path.endpoint_id, context.now());
  if (!row) throw noEndpoint();
  return { status: 200, body: { ...endpointBody(row), secret }, headers: NO_STORE };
};

export const sendWebhookTestEvent: GeneralHandlers['sendWebhookTestEvent'] = async ({ path, principal }, { db, now }) => {
  const at = now();
  return studentTransaction(db, principal.user_id, async (trx) => {
    const endpoint = await enabledEndpoint(trx, principal.user_id, path.endpoint_id);
    const eventId = await emitEvent(trx, { type: 'webhook.test', studentId: principal.user_id, data: { object: endpointBody(endpoint) }, at, direct: true });
    const deliveryId = await scheduleDelivery(trx, { eventId, endpointId: endpoint.id }, at);
    return { status: 202 as const, body: deliveryBody((await findDelivery(trx, endpoint.id, deliveryId))!) };
  });
};

export const listWebhookDeliveries: GeneralHandlers['listWebhookDeliveries'] = async ({ path, query, principal }, { db }) => {
  const endpoint = await findEndpoint(db, { user_id: principal.user_id }, path.endpoint_id);
  if (!endpoint) throw noEndpoint();
  const rows = await listDeliveries(db, endpoint.id, { limit: query.limit, before: timeIdCursor(query.cursor) });
  const result = page(rows, query.limit, (row) => [row.created_at.toISOString(), row.id]);
  return { status: 200, body: { ...result, data: result.data.map(deliveryBody) } };
};

export const resendWebhookDelivery: GeneralHandlers['resendWebhookDelivery'] = async ({ path, principal }, { db, now }) => {
  const at = now();
  return studentTransaction(db, principal.user_id, async (trx) => {
    const endpoint = await enabledEndpoint(trx, principal.user_id, path.endpoint_id);
    if (!(await findDelivery(trx, endpoint.id, path.delivery_id))) throw problems.notFound('This endpoint has no delivery with this id.');
    await resendDelivery(trx, path.delivery_id, at);
    return { status: 202 as const, body: deliveryBody((await findDelivery(trx, endpoint.id, path.delivery_id))!) };
  });
};

/** The endpoint's current secret in the clear, to show to its owner. */
async function currentSecret(db: Db, secrets: WebhookEndpointSettings['secrets'], owner: EndpointOwner, endpointId: string): Promise<string> {
  const row = await findEndpointSecret(db, owner, endpointId);
  // Removed between its creation and a replay of that creation: it is gone, like any other removed endpoint.
  if (!row) throw noEndpoint();
  return openEndpointSecret(secrets, endpointId, row.secret_sealed);
}

/**
 * The grant an endpoint made or redirected by this credential belongs to (GRANT_ARTIFACTS): the access token's, or the
 * one a personal key was minted through; null for the student's own key. Holds the grant until the transaction
 * ends, so that a revocation committing meanwhile either sees the endpoint and deletes it or, having committed
 * first, makes this request a 401.
 */
async function liveGrantOf(trx: Db, principal: GeneralPrincipal): Promise<string | null> {
  const grantId = principal.credential.grant_id;
  if (grantId !== null && !(await lockLiveGrant(trx, grantId))) throw problems.unauthorized('The credential was revoked.', REALM);
  return grantId;
}

/** Sending to a disabled endpoint would queue what delivery then refuses: the owner enables it first. */
async function enabledEndpoint(db: Db, userId: string, endpointId: string): Promise<EndpointRow> {
  const endpoint = await findEndpoint(db, { user_id: userId }, endpointId);
  if (!endpoint) throw noEndpoint();
  if (!endpoint.enabled) throw problems.endpointDisabled();
  return endpoint;
}

/** A URL delivery would refuse is the request's fault: a 400 naming body.url, with the refusal's stable code. */
async function assertUrl(url: string, targets: TargetOptions): Promise<void> {
  try {
    await assertDeliverableUrl(url, targets);
  } catch (error) {
    if (error instanceof UndeliverableUrlError) throw problems.undeliverableUrl(error.code, error.message);
    throw error;
  }
}

export function endpointBody(row: EndpointRow): Schemas['WebhookEndpoint'] {
  return {
    id: row.id,
    url: row.url,
    event_types: row.event_types as EventType[],
    description: row.description,
    status: endpointStatus(row),
    failing_since: row.failing_since?.toISOString() ?? null,
    previous_secret_expires_at: row.previous_secret_expires_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

function deliveryBody(row: DeliveryRow): Schemas['WebhookDelivery'] {
  return {
    id: row.id,
    event_id: row.event_id,
    event_type: row.event_type as EventType,
    status: row.status,
    attempts: row.attempts,
    last_attempt:
      row.last_attempt_started_at === null
        ? null
        : {
            started_at: row.last_attempt_started_at.toISOString(),
            duration_ms: row.last_attempt_duration_ms!,
            response_status: row.last_attempt_response_status,
            error: row.last_attempt_error,
          },
    next_attempt_at: row.status === 'pending' ? (row.next_attempt_at?.toISOString() ?? null) : null,
    succeeded_at: row.succeeded_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
  };
}
