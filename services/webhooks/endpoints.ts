// What the student's webhook handlers and the operator's CLI do to an endpoint, beyond reading it: register one within
// the student's bound, change where one sends (and so who owns it), send it a test event, and rotate its signing
// secret. The endpoint as the API shows it, which the test event carries, is endpoint-body.ts.
import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/connect.ts';
import { lockLiveGrant } from '../../db/queries/oauth.ts';
import { studentTransaction } from '../../db/student-transaction.ts';
import {
  countEndpoints,
  findDelivery,
  findEndpoint,
  findEndpointSecretsForUpdate,
  insertEndpoint,
  lockEndpointsOf,
  replaceEndpointSecret,
  updateEndpoint,
  type DeliveryRow,
  type EndpointChanges,
  type EndpointOwner,
  type EndpointRow,
} from '../../db/queries/webhooks.ts';
import type { GeneralPrincipal } from '../../server/auth/principal.ts';
import { MAX_ENDPOINTS_PER_STUDENT } from '../../domain/bounds.ts';
import { AuthenticationError, ConflictError, LimitError, NotFoundError } from '../../domain/errors.ts';
import { emitEvent } from '../events/emit.ts';
import { endpointBody } from './endpoint-body.ts';
import type { WebhookEndpointSettings } from './endpoint-settings.ts';
import { resendDelivery, scheduleDelivery } from './queue.ts';
import { createWebhookSecret, sealEndpointSecret, SECRET_ROTATION_OVERLAP_MS } from './secrets.ts';

/** What a student registers: where to send, which events, and whether to send yet. */
export interface EndpointRegistration {
  url: string;
  event_types: string[];
  description?: string;
  enabled?: boolean;
}

/**
 * Registers an endpoint of the student's with a new sealed secret, in the caller's transaction; refuses when the
 * student has MAX_ENDPOINTS_PER_STUDENT already, or when the credential's grant was revoked meanwhile.
 */
export async function registerEndpoint(
  trx: Db,
  principal: GeneralPrincipal,
  registration: EndpointRegistration,
  secrets: WebhookEndpointSettings['secrets'],
  at: Date,
): Promise<EndpointRow> {
  // Two registrations at once must not both see nine endpoints.
  await lockEndpointsOf(trx, principal.user_id);
  const grant_id = await liveGrantOf(trx, principal);
  if ((await countEndpoints(trx, principal.user_id)) >= MAX_ENDPOINTS_PER_STUDENT) {
    const detail = `You have ${MAX_ENDPOINTS_PER_STUDENT} webhook endpoints, the most a student may have; delete one first.`;
    throw new LimitError('endpoint_limit_reached', detail, { max: MAX_ENDPOINTS_PER_STUDENT });
  }
  const id = randomUUID();
  const secret_sealed = sealEndpointSecret(secrets, id, createWebhookSecret());
  const { url, event_types, description = '', enabled = true } = registration;
  return insertEndpoint(
    trx,
    { user_id: principal.user_id },
    { id, url, event_types, description, enabled, secret_sealed, grant_id },
    at,
  );
}

/**
 * Changes an endpoint of the student's; undefined when the student has none with this id. Whoever chooses where an
 * endpoint sends owns it: a new URL set through an app's grant ends with that grant (an app cannot point the
 * student's own endpoint at itself and keep it past revocation); set with the student's own key, it is the student's
 * again.
 */
export async function changeEndpoint(
  db: Db,
  principal: GeneralPrincipal,
  endpointId: string,
  changes: Omit<EndpointChanges, 'grant_id'>,
  at: Date,
): Promise<EndpointRow | undefined> {
  return db.transaction().execute(async (trx) => {
    const owned = changes.url === undefined ? changes : { ...changes, grant_id: await liveGrantOf(trx, principal) };
    return updateEndpoint(trx, { user_id: principal.user_id }, endpointId, owned, at);
  });
}

/**
 * Sends a `webhook.test` event to one endpoint of the student's, and only to it; returns its delivery, or undefined
 * when the student has no endpoint with this id.
 */
export async function sendTestEvent(
  db: Db,
  userId: string,
  endpointId: string,
  at: Date,
): Promise<DeliveryRow | undefined> {
  return studentTransaction(db, userId, async (trx) => {
    const endpoint = await enabledEndpoint(trx, userId, endpointId);
    if (!endpoint) return undefined;
    const eventId = await emitEvent(trx, {
      type: 'webhook.test',
      studentId: userId,
      data: { object: endpointBody(endpoint) },
      at,
      direct: true,
    });
    const deliveryId = await scheduleDelivery(trx, { eventId, endpointId: endpoint.id }, at);
    return (await findDelivery(trx, endpoint.id, deliveryId))!;
  });
}

/**
 * One more attempt of a delivery to an endpoint of the student's (queue.ts resendDelivery); returns the delivery as it
 * is then, or undefined when the student has no endpoint with this id.
 */
export async function resendEndpointDelivery(
  db: Db,
  userId: string,
  endpointId: string,
  deliveryId: string,
  at: Date,
): Promise<DeliveryRow | undefined> {
  return studentTransaction(db, userId, async (trx) => {
    const endpoint = await enabledEndpoint(trx, userId, endpointId);
    if (!endpoint) return undefined;
    if (!(await findDelivery(trx, endpoint.id, deliveryId))) {
      throw new NotFoundError('This endpoint has no delivery with this id.');
    }
    await resendDelivery(trx, deliveryId, at);
    return (await findDelivery(trx, endpoint.id, deliveryId))!;
  });
}

/**
 * An endpoint of the student's that may be sent to; undefined when the student has none with this id. Sending to a
 * disabled endpoint would queue what delivery then refuses: it is refused here, and the owner enables it first.
 */
export async function enabledEndpoint(db: Db, userId: string, endpointId: string): Promise<EndpointRow | undefined> {
  const endpoint = await findEndpoint(db, { user_id: userId }, endpointId);
  if (endpoint && !endpoint.enabled) {
    throw new ConflictError(
      'endpoint_disabled',
      'This endpoint is disabled; enable it (PATCH {"enabled":true}) before sending to it.',
    );
  }
  return endpoint;
}

/**
 * The grant an endpoint made or redirected by this credential belongs to (GRANT_ARTIFACTS): the access token's, or the
 * one a personal key was minted through; null for the student's own key. Holds the grant until the transaction
 * ends, so that a revocation committing meanwhile either sees the endpoint and deletes it or, having committed
 * first, makes this request a 401.
 */
async function liveGrantOf(trx: Db, principal: GeneralPrincipal): Promise<string | null> {
  const grantId = principal.credential.grant_id;
  if (grantId !== null && !(await lockLiveGrant(trx, grantId)))
    throw new AuthenticationError('The credential was revoked.');
  return grantId;
}

/**
 * A new current secret for an endpoint of `owner`; the one it replaces signs beside it for 24 hours. The student's
 * rotation and the CLI's rotation of an app's endpoint. `row` is undefined when `owner` has no such endpoint.
 */
export async function rotateSecret(
  db: Db,
  secrets: WebhookEndpointSettings['secrets'],
  owner: EndpointOwner,
  endpointId: string,
  at: Date,
) {
  return db.transaction().execute(async (trx) => {
    const current = await findEndpointSecretsForUpdate(trx, owner, endpointId);
    if (!current) return { row: undefined, secret: undefined };
    const secret = createWebhookSecret();
    const row = await replaceEndpointSecret(
      trx,
      owner,
      endpointId,
      {
        secret_sealed: sealEndpointSecret(secrets, endpointId, secret),
        previous_secret_sealed: current.secret_sealed,
        previous_secret_expires_at: new Date(at.getTime() + SECRET_ROTATION_OVERLAP_MS),
      },
      at,
    );
    return { row, secret };
  });
}
