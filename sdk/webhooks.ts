// Verifying a webhook delivery on the receiving side: the Standard Webhooks signature (HMAC-SHA256 of
// `{webhook-id}.{webhook-timestamp}.{body}` under the endpoint's whsec_ secret, timestamps within 5 minutes), then the
// body as the typed event its `type` names. Pass the raw body exactly as received: re-serialised JSON does not verify.
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import type { components } from '../generated/general/types.ts';

export { WebhookVerificationError };

/** Every event kind the service sends, told apart by its `type`: the spec's `WebhookEvent` union. */
export type WebhookEvent = components['schemas']['WebhookEvent'];

/**
 * The event a delivery carries, once its signature is valid for `secret` (a `whsec_` secret); throws
 * WebhookVerificationError otherwise (a wrong or missing signature, a timestamp more than 5 minutes off).
 * `headers` may be a Fetch `Headers` or a Node-style object; their names are matched case-insensitively.
 */
export function verifyWebhook(
  secret: string,
  headers: Headers | Record<string, string | string[] | undefined>,
  body: string | Buffer,
): WebhookEvent {
  const entries = headers instanceof Headers ? [...headers.entries()] : Object.entries(headers);
  const lowerCased = Object.fromEntries(
    entries.flatMap(([name, value]) =>
      value === undefined ? [] : [[name.toLowerCase(), Array.isArray(value) ? value.join(', ') : value]],
    ),
  );
  return new Webhook(secret).verify(body, lowerCased) as WebhookEvent;
}
