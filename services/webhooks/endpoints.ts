// What the student's webhook handlers and the operator's CLI both do to an endpoint: rotate its signing secret, and
// tell its status as the API names it.
import type { Db } from '../../db/connect.ts';
import { findEndpointSecretsForUpdate, replaceEndpointSecret, type EndpointOwner, type EndpointRow } from '../../db/queries/webhooks.ts';
import type { components } from '../../generated/general/types.ts';
import type { WebhookEndpointSettings } from './endpoint-settings.ts';
import { createWebhookSecret, sealEndpointSecret, SECRET_ROTATION_OVERLAP_MS } from './secrets.ts';

/**
 * A new current secret for an endpoint of `owner`; the one it replaces signs beside it for 24 hours. The student's rotation and the CLI's
 * rotation of an app's endpoint. `row` is undefined when `owner` has no such endpoint.
 */
export async function rotateSecret(db: Db, secrets: WebhookEndpointSettings['secrets'], owner: EndpointOwner, endpointId: string, at: Date) {
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


export function endpointStatus(row: Pick<EndpointRow, 'enabled' | 'disabled_reason'>): components['schemas']['WebhookEndpoint']['status'] {
  if (row.enabled) return 'enabled';
  return row.disabled_reason === 'failing' ? 'disabled_failing' : 'disabled';
}
