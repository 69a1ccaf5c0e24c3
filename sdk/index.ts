// The typed SDK of both surfaces: openapi-fetch clients over the types `npm run generate` derives from the spec,
// so every path, parameter, body and response is checked by the compiler against the contract.
//
//   import { createPartnerClient } from './sdk/index.ts';
//   const partner = createPartnerClient({ baseUrl: 'http://localhost:3000', apiKey: process.env.PARTNER_KEY! });
//   const { data, error } = await partner.GET('/api/v1/universities', { params: { query: { country_code: 'kz' } } });
import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { paths as GeneralPaths, components as GeneralComponents } from '../generated/general/types.ts';
import type { paths as PartnerPaths, components as PartnerComponents } from '../generated/partner-v1/types.ts';
import { keepRefusedStreamBodies } from './sse.ts';

export { eventFeed, EventFeedError, type EventFeed, type EventFeedOptions, type EventFeedType } from './events.ts';
export {
  OfflineStore,
  SyncError,
  type CommandType,
  type ListKind,
  type RejectedEdit,
  type SavedStore,
  type SyncCommand,
  type SyncObject,
} from './offline-store.ts';
export { sseEvents, StreamRefusedError, type EventSourceMessage } from './sse.ts';
export { verifyWebhook, WebhookVerificationError, type WebhookEvent } from './webhooks.ts';
export type { GeneralPaths, GeneralComponents, PartnerPaths, PartnerComponents };
/** A schema of the partner surface by name, e.g. `PartnerSchema<'University'>`. */
export type PartnerSchema<Name extends keyof PartnerComponents['schemas']> = PartnerComponents['schemas'][Name];
/** A schema of the general surface by name, e.g. `GeneralSchema<'UserProfile'>`. */
export type GeneralSchema<Name extends keyof GeneralComponents['schemas']> = GeneralComponents['schemas'][Name];

interface Common {
  /** The service's origin, e.g. `https://api.study-companion.example`; the paths carry their `/api` prefix. */
  baseUrl: string;
  /** A fetch to use instead of the global one (tests, proxies, retries). */
  fetch?: ClientOptions['fetch'];
}

/** The partner surface (`/api/v1`), with the partner's API key on every request. */
export function createPartnerClient({ baseUrl, apiKey, fetch }: Common & { apiKey: string }): Client<PartnerPaths> {
  const client = createClient<PartnerPaths>({
    baseUrl,
    headers: { 'X-Service-API-Key': apiKey },
    ...(fetch ? { fetch } : {}),
  });
  client.use(keepRefusedStreamBodies);
  return client;
}

/**
 * The general surface (`/api`), acting for one student: with an OAuth access token (a string, or a function the
 * client calls before each request, so a refreshed token is picked up) or with a personal API key.
 * Without either, only the operations that need no credentials (createAccount) succeed.
 */
export function createGeneralClient(
  options: Common & ({ accessToken: string | (() => string | Promise<string>) } | { apiKey: string } | object),
): Client<GeneralPaths> {
  const { baseUrl, fetch } = options;
  const client = createClient<GeneralPaths>({
    baseUrl,
    ...('apiKey' in options ? { headers: { 'X-Service-API-Key': options.apiKey } } : {}),
    ...(fetch ? { fetch } : {}),
  });
  client.use(keepRefusedStreamBodies);
  if ('accessToken' in options) {
    const { accessToken } = options;
    client.use({
      async onRequest({ request }) {
        request.headers.set(
          'Authorization',
          `Bearer ${typeof accessToken === 'function' ? await accessToken() : accessToken}`,
        );
        return request;
      },
    });
  }
  return client;
}
