// The payment provider as tests play it: events signed per Standard Webhooks by the `standardwebhooks` library, under
// the secret test apps are configured with.
import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

export const TEST_PAYMENT_PROVIDER_SECRET = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;

/** Standard Webhooks headers for `payload`, signed at `at` (default now) under `secret`. */
export function providerSignature(
  payload: string,
  options: { secret?: string; at?: Date; id?: string } = {},
): Record<string, string> {
  const id = options.id ?? `msg_${randomUUID()}`;
  const at = options.at ?? new Date();
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(options.secret ?? TEST_PAYMENT_PROVIDER_SECRET).sign(id, at, payload),
  };
}

/** A paid plus checkout of the student with this e-mail, as the provider sends it. */
export function paidCheckout(student: { account_id: string } | { email: string }, eventId = `evt_${randomUUID()}`) {
  return {
    id: eventId,
    type: 'checkout.completed',
    data: { object: { student, plan: 'plus', amount: 4990, currency: 'usd', paid_at: '2026-11-23T11:00:00Z' } },
  };
}

const SIGNATURE_HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature'];

/**
 * The headers to send with a request generated from the spec. For an operation whose credential is a Standard Webhooks
 * signature (the payment provider's callback) the generated signature headers give way to a real signature of
 * `payload`, as valid credentials do elsewhere, unless one of them is the input a broken request breaks.
 */
export function withProviderSignature(
  op: { parameters: readonly { name: string }[] },
  request: { headers: Record<string, string>; broken?: string },
  payload: string | undefined,
): Record<string, string> {
  if (payload === undefined || !op.parameters.some((p) => p.name === 'webhook-signature')) return request.headers;
  if (SIGNATURE_HEADERS.some((name) => request.broken?.includes(`header parameter ${name}`))) return request.headers;
  const unsigned = Object.fromEntries(
    Object.entries(request.headers).filter(([name]) => !SIGNATURE_HEADERS.includes(name.toLowerCase())),
  );
  return { ...unsigned, ...providerSignature(payload) };
}
