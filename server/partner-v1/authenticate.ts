// Partner keys, from `X-Service-API-Key` or `Authorization: Bearer`: the two security schemes of the spec.
import type { Request } from 'express';
import type { Logger } from 'pino';
import type { Db } from '../../db/connect.ts';
import { findActiveApiKey, findActiveKeyKind, type ApiKeyRecord } from '../../db/queries/api-keys.ts';
import { looksLikeApiKey } from '../auth/api-keys.ts';
import { bearerToken } from '../auth/bearer-token.ts';
import { keyUseRecorder } from '../auth/key-use.ts';
import { hashSecret } from '../auth/secret-hash.ts';
import type { AuthOutcome } from '../surface.ts';

const PERSONAL_KEY_ON_PARTNER_SURFACE =
  "This is a student's personal API key: it works on the general surface (/api/...), not on the partner API (/api/v1/...), which takes a partner key.";

export function partnerKeyAuthenticators(db: Db, logger: Logger, now: () => Date) {
  const recordUse = keyUseRecorder(db, logger, now);

  async function verify(key: string | undefined): Promise<AuthOutcome<ApiKeyRecord>> {
    if (!key) return { error: 'missing' };
    // Revocation takes effect at once because every request reads the key's row; there is no cache to expire.
    const hash = looksLikeApiKey(key) ? hashSecret(key) : undefined;
    const record = hash ? await findActiveApiKey(db, hash) : undefined;
    if (!record) return hash && (await findActiveKeyKind(db, hash)) === 'personal' ? { error: 'invalid', detail: PERSONAL_KEY_ON_PARTNER_SURFACE } : { error: 'invalid' };
    recordUse(record);
    return { principal: record };
  }

  return {
    ApiKeyHeader: (req: Request) => verify(req.get('x-service-api-key')),
    ApiKeyBearer: (req: Request) => verify(bearerToken(req)),
  };
}
