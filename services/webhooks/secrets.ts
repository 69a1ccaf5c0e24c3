// Webhook signing secrets: `whsec_<base64 of 32 random bytes>` (the Standard Webhooks form), shown to their owner once
// and stored only sealed (AES-256-GCM, server/auth/secret-box.ts) under a context bound to the endpoint, so a sealed
// secret copied onto another endpoint's row does not open. During a rotation the previous secret keeps signing beside
// the new one until `previous_secret_expires_at`, so receivers can switch without dropping a delivery.
import { randomBytes } from 'node:crypto';
import type { SecretBox } from '../../server/auth/secret-box.ts';

const SECRET_BYTES = 32;
/** How long a rotated-out secret still signs (the 24 h overlap). */
export const SECRET_ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

export function createWebhookSecret(): string {
  return `whsec_${randomBytes(SECRET_BYTES).toString('base64')}`;
}

const context = (endpointId: string) => `webhook-endpoint:${endpointId}`;

export function sealEndpointSecret(box: SecretBox, endpointId: string, secret: string): string {
  return box.seal(secret, context(endpointId));
}

export function openEndpointSecret(box: SecretBox, endpointId: string, sealed: string): string {
  return box.open(sealed, context(endpointId));
}

export interface EndpointSecrets {
  id: string;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: Date | null;
}

/** The secrets that sign a delivery at `now`: the current one first, then the previous one while it is live. */
export function signingSecrets(box: SecretBox, endpoint: EndpointSecrets, now: Date): string[] {
  const secrets = [openEndpointSecret(box, endpoint.id, endpoint.secret_sealed)];
  if (
    endpoint.previous_secret_sealed &&
    endpoint.previous_secret_expires_at &&
    endpoint.previous_secret_expires_at > now
  ) {
    secrets.push(openEndpointSecret(box, endpoint.id, endpoint.previous_secret_sealed));
  }
  return secrets;
}
