// A webhook endpoint as the API shows it, from its row: the one mapper that the endpoint operations answer with, that
// a `webhook.test` event carries as its object, and whose status words the operator's CLI prints.
import type { EndpointRow } from '../../db/queries/webhooks.ts';
import type { components } from '../../generated/general/types.ts';
import type { EventType } from '../events/emit.ts';

export function endpointBody(row: EndpointRow): components['schemas']['WebhookEndpoint'] {
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

export function endpointStatus(
  row: Pick<EndpointRow, 'enabled' | 'disabled_reason'>,
): components['schemas']['WebhookEndpoint']['status'] {
  if (row.enabled) return 'enabled';
  return row.disabled_reason === 'failing' ? 'disabled_failing' : 'disabled';
}
