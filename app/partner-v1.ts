// The partner surface: its spec, its key authentication, its per-key limits and its handlers.
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import type { Db } from '../db/connect.ts';
import type { Notifications } from '../db/notifications.ts';
import type { Lifecycle } from '../server/process/lifecycle.ts';
import type { ApiKeyRecord } from '../db/queries/api-keys.ts';
import { keepLeaderboardsInMemory } from '../db/queries/leaderboards.ts';
import { keepStatsInMemory } from '../db/queries/stats.ts';
import { keepUniversitiesInMemory } from '../db/queries/universities.ts';
import { keepHolidaysInMemory } from '../db/queries/holidays.ts';
import { partnerV1Handlers } from '../handlers/partner-v1/index.ts';
import type { AuthFailureLimit } from '../server/auth/auth-failure-limit.ts';
import { loadSurfaceContract } from '../server/contract/contract.ts';
import { createLimiter, type LimitStores } from '../server/limits/rate-limits.ts';
import { serveSurface } from '../server/contract/surface.ts';
import { partnerKeyAuthenticators } from '../server/auth/authenticate-partner-v1.ts';

export const PARTNER_V1_PREFIX = '/api/v1';

export interface PartnerV1Deps {
  db: Db;
  logger: Logger;
  limitStores: LimitStores;
  authFailures: AuthFailureLimit;
  now: () => Date;
  lifecycle: Lifecycle;
  /** Drops what each process keeps (keys, universities, holidays, leaderboards, stats) when it changes anywhere. */
  notifications: Notifications;
  onContractViolation?: (req: IncomingMessage, failures: string[]) => void;
}

export async function partnerV1(deps: PartnerV1Deps) {
  const contract = await loadSurfaceContract('partner-v1');
  keepUniversitiesInMemory(deps.db, deps.notifications);
  keepHolidaysInMemory(deps.db, deps.notifications);
  keepLeaderboardsInMemory(deps.db, deps.notifications);
  keepStatsInMemory(deps.db, deps.notifications);
  const limitKey = createLimiter<ApiKeyRecord>(
    'partner-v1',
    [
      { name: 'minute', windowMs: 60_000, limitOf: (key) => key.per_minute, keyOf: (key) => key.id },
      { name: 'day', windowMs: 24 * 60 * 60_000, limitOf: (key) => key.per_day, keyOf: (key) => key.id },
    ],
    deps.limitStores,
    // Quotas fail open: a Redis outage must not become an outage of the partner API
    // (docs/production.md#when-a-dependency-fails).
    { onStoreFailure: 'allow' },
  );
  const serve = serveSurface<ApiKeyRecord>({
    contract,
    authenticators: partnerKeyAuthenticators(deps.db, deps.logger, deps.now, deps.notifications),
    challenge: 'Bearer realm="partner-v1"',
    unauthorizedDetail: (failure) =>
      failure === 'missing'
        ? 'This request needs an API key, in the X-Service-API-Key header or as Authorization: Bearer <key>.'
        : 'The API key is unknown or revoked.',
    beforeAuthentication: deps.authFailures.check,
    onInvalidCredentials: deps.authFailures.recordFailure,
    // Every partner operation needs a key; a request without one is refused with 401 and counts nowhere.
    limit: async (req, res, key) => {
      if (key) await limitKey(req, res, key);
    },
    methodNotAllowedReason: '; the partner surface is read-only',
    handlers: partnerV1Handlers,
    context: { db: deps.db, now: deps.now, lifecycle: deps.lifecycle, apiVersion: contract.definition.info.version },
    ...(deps.onContractViolation ? { onContractViolation: deps.onContractViolation } : {}),
  });
  return { serve, allowedMethods: contract.allowedMethods };
}
