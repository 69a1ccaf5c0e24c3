// A student's webhook endpoints (after Stripe's and GitHub's): register, list, change, remove, rotate the signing
// secret, send a test, see deliveries and re-send one. A secret is shown only when it is made; it is stored sealed
// (services/webhooks/secrets.ts) and delivery (services/webhooks/) signs with it.
import type { Db } from '../../db/connect.ts';
import {
  deleteEndpoint,
  findEndpoint,
  findEndpointSecret,
  listDeliveries,
  listEndpoints,
  type DeliveryRow,
  type EndpointOwner,
} from '../../db/queries/webhooks.ts';
import type { EventType } from '../../services/events/emit.ts';
import { readScopesOf } from '../../services/events/read-scopes.ts';
import { requireScopes } from '../../server/auth/scopes.ts';
import { endpointBody } from '../../services/webhooks/endpoint-body.ts';
import {
  changeEndpoint,
  registerEndpoint,
  resendEndpointDelivery,
  rotateSecret,
  sendTestEvent,
} from '../../services/webhooks/endpoints.ts';
import type { WebhookEndpointSettings } from '../../services/webhooks/endpoint-settings.ts';
import { problems } from '../../server/http/problems.ts';
import { openEndpointSecret } from '../../services/webhooks/secrets.ts';
import {
  assertDeliverableUrl,
  UndeliverableUrlError,
  type TargetOptions,
} from '../../services/webhooks/target-address.ts';
import { page, timeIdCursor } from '../../server/contract/cursor.ts';
import { idempotently } from '../../server/http/idempotency.ts';
import type { GeneralHandlers, Schemas } from './types.ts';

const NO_STORE = { 'Cache-Control': 'no-store' };
const noEndpoint = () => problems.notFound('You have no webhook endpoint with this id.');

export const listWebhookEndpoints: GeneralHandlers['listWebhookEndpoints'] = async ({ principal }, { db }) => {
  const rows = await listEndpoints(db, principal.user_id);
  return { status: 200, body: { data: rows.map(endpointBody) } };
};

export const createWebhookEndpoint: GeneralHandlers['createWebhookEndpoint'] = async (
  { headers, body, principal },
  context,
) => {
  const { db, now } = context;
  const { secrets, targets } = context.webhooks;
  const at = now();
  requireScopes(principal, readScopesOf(body.event_types));
  await assertUrl(body.url, targets);
  // The response stored for an Idempotency-Key never holds the secret (it would lie there in the clear for a day):
  // the secret is added from its sealed column to the first answer and to every replay alike.
  const request = {
    userId: principal.user_id,
    key: headers['Idempotency-Key'],
    operationId: 'createWebhookEndpoint',
    body,
    now: at,
  };
  const created = await idempotently(
    db,
    request,
    async (trx): Promise<{ status: 201; body: Schemas['WebhookEndpoint']; headers?: Record<string, string> }> => {
      return { status: 201, body: endpointBody(await registerEndpoint(trx, principal, body, secrets, at)) };
    },
  );
  const secret = await currentSecret(db, secrets, { user_id: principal.user_id }, created.body.id);
  return { ...created, body: { ...created.body, secret }, headers: { ...created.headers, ...NO_STORE } };
};

export const getWebhookEndpoint: GeneralHandlers['getWebhookEndpoint'] = async ({ path, principal }, { db }) => {
  const row = await findEndpoint(db, { user_id: principal.user_id }, path.endpoint_id);
  if (!row) throw noEndpoint();
  return { status: 200, body: endpointBody(row) };
};

export const updateWebhookEndpoint: GeneralHandlers['updateWebhookEndpoint'] = async (
  { path, body, principal },
  context,
) => {
  const { targets } = context.webhooks;
  if (body.event_types) requireScopes(principal, readScopesOf(body.event_types));
  if (body.url !== undefined) await assertUrl(body.url, targets);
  const row = await changeEndpoint(context.db, principal, path.endpoint_id, body, context.now());
  if (!row) throw noEndpoint();
  return { status: 200, body: endpointBody(row) };
};

export const deleteWebhookEndpoint: GeneralHandlers['deleteWebhookEndpoint'] = async ({ path, principal }, { db }) => {
  if (!(await deleteEndpoint(db, { user_id: principal.user_id }, path.endpoint_id))) throw noEndpoint();
  return { status: 204, body: undefined };
};

export const rotateWebhookEndpointSecret: GeneralHandlers['rotateWebhookEndpointSecret'] = async (
  { path, principal },
  context,
) => {
  const { secrets } = context.webhooks;
  const { row, secret } = await rotateSecret(
    context.db,
    secrets,
    { user_id: principal.user_id },
    path.endpoint_id,
    context.now(),
  );
  if (!row) throw noEndpoint();
  return { status: 200, body: { ...endpointBody(row), secret }, headers: NO_STORE };
};

export const sendWebhookTestEvent: GeneralHandlers['sendWebhookTestEvent'] = async (
  { path, principal },
  { db, now },
) => {
  const delivery = await sendTestEvent(db, principal.user_id, path.endpoint_id, now());
  if (!delivery) throw noEndpoint();
  return { status: 202, body: deliveryBody(delivery) };
};

export const listWebhookDeliveries: GeneralHandlers['listWebhookDeliveries'] = async (
  { path, query, principal },
  { db },
) => {
  const endpoint = await findEndpoint(db, { user_id: principal.user_id }, path.endpoint_id);
  if (!endpoint) throw noEndpoint();
  const rows = await listDeliveries(db, endpoint.id, { limit: query.limit, before: timeIdCursor(query.cursor) });
  const result = page(rows, query.limit, (row) => [row.created_at.toISOString(), row.id]);
  return { status: 200, body: { ...result, data: result.data.map(deliveryBody) } };
};

export const resendWebhookDelivery: GeneralHandlers['resendWebhookDelivery'] = async (
  { path, principal },
  { db, now },
) => {
  const delivery = await resendEndpointDelivery(db, principal.user_id, path.endpoint_id, path.delivery_id, now());
  if (!delivery) throw noEndpoint();
  return { status: 202 as const, body: deliveryBody(delivery) };
};

/** The endpoint's current secret in the clear, to show to its owner. */
async function currentSecret(
  db: Db,
  secrets: WebhookEndpointSettings['secrets'],
  owner: EndpointOwner,
  endpointId: string,
): Promise<string> {
  const row = await findEndpointSecret(db, owner, endpointId);
  // Removed between its creation and a replay of that creation: it is gone, like any other removed endpoint.
  if (!row) throw noEndpoint();
  return openEndpointSecret(secrets, endpointId, row.secret_sealed);
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
