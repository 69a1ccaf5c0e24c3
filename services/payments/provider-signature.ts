// The payment provider signs its events per Standard Webhooks; the signature is the callback's only credential.
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { SignatureError } from '../../domain/errors.ts';

export interface SignatureHeaders {
  'webhook-id'?: string;
  'webhook-timestamp'?: string;
  'webhook-signature'?: string;
}

/**
 * Verifies the body's bytes against the headers under the provider's secret, timestamp within 5 minutes of now
 * included (the library's tolerance); throws a 401 problem saying what failed.
 */
export function verifyProviderSignature(secret: string, rawBody: Buffer | undefined, headers: SignatureHeaders): void {
  const { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature } = headers;
  if (!id || !timestamp || !signature || !rawBody) {
    throw new SignatureError(
      'Send the event signed per Standard Webhooks: webhook-id, webhook-timestamp and webhook-signature headers.',
    );
  }
  try {
    new Webhook(secret).verify(rawBody, {
      'webhook-id': id,
      'webhook-timestamp': timestamp,
      'webhook-signature': signature,
    });
  } catch (error) {
    if (error instanceof WebhookVerificationError)
      throw new SignatureError(`The webhook-signature does not verify under the provider secret: ${error.message}.`);
    throw error;
  }
}
