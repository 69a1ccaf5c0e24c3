// Partner keys, from `X-Service-API-Key` or `Authorization: Bearer`: the two security schemes of the spec.
import type { Request } from 'express';
import type { Logger } from 'pino';
import type { Db } from '../../db/connect.ts';
import { findActiveApiKey, markApiKeyUsed, type ApiKeyRecord } from '../../db/queries/api-keys.ts';
import { hashApiKey, looksLikeApiKey } from '../auth/api-keys.ts';
import type { AuthOutcome } from '../surface.ts';

/** `last_used_at` is a hint for operators, so each process writes it at most once a minute per key. */
const TOUCH_INTERVAL_MS = 60_000;

export function partnerKeyAuthenticators(db: Db, logger: Logger, now: () => Date) {
  const lastTouched = new Map<string, number>();

  async function verify(key: string | undefined): Promise<AuthOutcome<ApiKeyRecord>> {
    if (!key) return { error: 'missing' };
    // Revocation takes effect at once because every request reads the key's row; there is no cache to expire.
    const record = looksLikeApiKey(key) ? await findActiveApiKey(db, hashApiKey(key)) : undefined;
    if (!record) return { error: 'invalid' };
    const at = now();
    if (at.getTime() - (lastTouched.get(record.id) ?? 0) >= TOUCH_INTERVAL_MS) {
      lastTouched.set(record.id, at.getTime());
      markApiKeyUsed(db, record.id, at).catch((error) => logger.warn({ err: error, key: record.prefix }, 'could not record key use'));
    }
    return { principal: record };
  }

  return {
    ApiKeyHeader: (req: Request) => verify(req.get('x-service-api-key')),
    ApiKeyBearer: (req: Request) => verify(/^Bearer +(\S+)\s*$/i.exec(req.get('authorization') ?? '')?.[1]),
  };
}
