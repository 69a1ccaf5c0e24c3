// Partner keys, from `X-Service-API-Key` or `Authorization: Bearer` (read by passport-http-bearer,
// server/auth/bearer-authenticator.ts): the two security schemes of the spec.
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import type { Db } from '../../db/connect.ts';
import {
  findActiveApiKey,
  findActiveKeyKind,
  PARTNER_KEYS_CHANNEL,
  type ApiKeyRecord,
} from '../../db/queries/api-keys.ts';
import type { Notifications } from '../../db/notifications.ts';
import { looksLikeApiKey } from './api-keys.ts';
import { bearerAuthenticator } from './bearer-authenticator.ts';
import { headerValue } from '../http/request-target.ts';
import { invalidatedCache } from '../../db/invalidated-cache.ts';
import { keyUseRecorder } from './key-use.ts';
import { hashSecret } from './secret-hash.ts';
import type { AuthOutcome } from '../contract/surface.ts';

const PERSONAL_KEY_ON_PARTNER_SURFACE =
  "This is a student's personal API key: it works on the general surface (/api/...), not on the partner API (/api/v1/...), which takes a partner key.";

/** Partner keys kept per process: far more than there are partners, few enough to stay small (~200 bytes each). */
const KEPT_KEYS = 10_000;

export function partnerKeyAuthenticators(db: Db, logger: Logger, now: () => Date, notifications: Notifications) {
  const recordUse = keyUseRecorder(db, logger, now);
  // Active keys by hash, dropped in every process when any key is revoked (revokeApiKey notifies).
  const activeKeys = invalidatedCache<ApiKeyRecord>(notifications, PARTNER_KEYS_CHANNEL, { maxEntries: KEPT_KEYS });

  async function verify(key: string | undefined): Promise<AuthOutcome<ApiKeyRecord>> {
    if (!key) return { error: 'missing' };
    const hash = looksLikeApiKey(key) ? hashSecret(key) : undefined;
    const record = hash ? await activeKeys.get(hash, () => findActiveApiKey(db, hash)) : undefined;
    if (!record)
      return hash && (await findActiveKeyKind(db, hash)) === 'personal'
        ? { error: 'invalid', detail: PERSONAL_KEY_ON_PARTNER_SURFACE }
        : { error: 'invalid' };
    recordUse(record);
    return { principal: record };
  }

  return {
    ApiKeyHeader: (req: IncomingMessage) => verify(headerValue(req, 'x-service-api-key')),
    ApiKeyBearer: bearerAuthenticator(verify),
  };
}
