// One HTTP attempt of a webhook: a JSON POST signed with the Standard Webhooks scheme (the `standardwebhooks`
// library: webhook-id, webhook-timestamp, and one `v1,<signature>` per live secret in webhook-signature), bounded
// to `timeoutMs` from the lookup to the end of the response body, on a connection whose address was checked
// (target-address.ts: the agent's lookup, or the literal address). Redirects are not followed (node:http does
// not): a 3xx is a failed attempt. The receiver's body is read and dropped.
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { checkedLookup, isPublicAddress } from './target-address.ts';

export interface WebhookRequest {
  url: string;
  /** The event id: the webhook-id a receiver de-duplicates on. */
  id: string;
  /** The JSON body, exactly as signed. */
  payload: string;
  secrets: string[];
  timeoutMs: number;
  allowPrivate: boolean;
  now?: Date;
}

export interface WebhookResponse {
  /** The receiver's status; null when there was none (refused, timed out, address not allowed). */
  status: number | null;
  /** Why there was no acceptable answer, short; never contains a secret. */
  error: string | null;
  durationMs: number;
}

const MAX_ERROR_LENGTH = 200;

export function signatureHeaders(id: string, payload: string, secrets: string[], at: Date): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(id, at, payload)).join(' '),
  };
}

export async function sendWebhook(request: WebhookRequest): Promise<WebhookResponse> {
  const started = performance.now();
  const done = (status: number | null, error: string | null): WebhookResponse => ({
    status,
    error: error && error.slice(0, MAX_ERROR_LENGTH),
    durationMs: Math.round(performance.now() - started),
  });
  const url = new URL(request.url);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  // A literal address never reaches the lookup, so it is checked here.
  if (!request.allowPrivate && isIP(host) && !isPublicAddress(host))
    return done(null, `address not allowed: ${host} is not public`);
  if (!request.allowPrivate && url.protocol !== 'https:') return done(null, 'address not allowed: not https');
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'study-companion-webhooks/1',
    ...signatureHeaders(request.id, request.payload, request.secrets, request.now ?? new Date()),
  };
  return new Promise<WebhookResponse>((resolve) => {
    const transport = url.protocol === 'https:' ? https : http;
    const req = transport.request(url, {
      method: 'POST',
      headers: { ...headers, 'content-length': Buffer.byteLength(request.payload) },
      // A fresh connection per attempt: a pooled socket would skip the lookup that checks the address.
      agent: false,
      lookup: checkedLookup({ allowPrivate: request.allowPrivate }) as never,
    });
    let settled = false;
    const finish = (response: WebhookResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(response);
    };
    // One bound for the whole exchange, a trickling response body included: at the deadline the attempt ends as
    // timed out whatever the socket does next.
    const timer = setTimeout(() => {
      finish(done(null, `timed out after ${request.timeoutMs} ms`));
      req.destroy();
    }, request.timeoutMs);
    req.on('error', (error) => finish(done(null, describe(error))));
    req.on('response', (res) => {
      res.on('error', (error) => finish(done(null, describe(error))));
      res.on('end', () =>
        finish(
          done(
            res.statusCode ?? null,
            res.statusCode && res.statusCode >= 200 && res.statusCode < 300 ? null : `HTTP ${res.statusCode}`,
          ),
        ),
      );
      res.resume();
    });
    req.end(request.payload);
  });
}

function describe(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'webhook_url_not_public') return `address not allowed: ${error.message}`;
  return code && !error.message.includes(code) ? `${code}: ${error.message}` : error.message;
}
