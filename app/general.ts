// The general surface: its spec, token and personal-key authentication, scope checks, per-account limits by
// plan, and its handlers.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Db } from '../db/connect.ts';
import { createAiQueue, type AiQueue } from '../services/ai/queue.ts';
import { createExportLimits, type ExportLimits } from '../services/exports/export-limits.ts';
import type { Notifications } from '../db/notifications.ts';
import { openStreams } from '../services/streams/open-streams.ts';
import { accountLeases } from '../services/leases/account-leases.ts';
import { readinessGroups } from '../services/readiness/readiness-groups.ts';
import type { StreamSettings } from '../services/streams/stream-settings.ts';
import type { Lifecycle } from '../server/process/lifecycle.ts';
import { localTutor } from '../services/ai/tutor/local.ts';
import type { Tutor } from '../services/ai/tutor/types.ts';
import type { GeneralContext } from '../handlers/general/context.ts';
import { generalHandlers } from '../handlers/general/index.ts';
import type { AccessTokenIssuer } from '../server/auth/access-tokens.ts';
import { credentialCarriers } from '../server/auth/credential-carriers.ts';
import type { AuthFailureLimit } from '../server/auth/auth-failure-limit.ts';
import { passwordAttempts } from '../server/auth/password-attempts.ts';
import type { WebhookEndpointSettings } from '../services/webhooks/endpoint-settings.ts';
import type { ClientAddress } from '../server/http/client-address.ts';
import { loadSurfaceContract, type Contract } from '../server/contract/contract.ts';
import { requestPath } from '../server/http/request-target.ts';
import { problems } from '../server/http/problems.ts';
import { createLimiter, type LimitStores, type TakeMoreRequests } from '../server/limits/rate-limits.ts';
import { serveSurface } from '../server/contract/surface.ts';
import { generalAuthenticators } from '../server/auth/authenticate-general.ts';
import type { GeneralPrincipal } from '../server/auth/principal.ts';
import { REALM } from '../server/auth/realm.ts';
import { authorizeScopes } from '../server/auth/scopes.ts';
import { hashSecret } from '../server/auth/secret-hash.ts';

export const GENERAL_PREFIX = '/api';
const AI_PREFIX = '/api/ai/';
/** Accounts created per client address and hour: enough for a classroom behind one NAT, too few for a bot farm. */
const SIGNUPS_PER_HOUR = 10;
/**
 * Reads of one calendar feed URL per minute: calendar apps poll every few minutes at most, so this is room for a few
 * devices and a manual refresh, and a leaked URL polled in a loop costs one counter hit, not a calendar, per request.
 */
export const FEED_READS_PER_MINUTE = 20;
const FEED_PATH = /^\/api\/calendar\/([^/]+)\.ics$/;

export interface GeneralDeps {
  db: Db;
  logger: Logger;
  limitStores: LimitStores;
  authFailures: AuthFailureLimit;
  tokens: AccessTokenIssuer;
  now: () => Date;
  lifecycle: Lifecycle;
  /** Answers POST /api/ai/chat; absent: the built-in local tutor. */
  tutor?: Tutor;
  /** PAYMENT_PROVIDER_SECRET; absent: payment provider events are refused. */
  paymentProviderSecret?: string;
  /** Generation slots for POST /api/ai/chat; absent: a queue of the default size, in this process's memory. */
  aiQueue?: AiQueue;
  /** The account export's bounds; absent: the defaults. */
  exports?: ExportLimits;
  /** Carries readiness moves between processes to the readiness streams, and principal changes to the kept principals. */
  notifications: Notifications;
  streamSettings: StreamSettings;
  webhooks: WebhookEndpointSettings;
  onContractViolation?: (req: IncomingMessage, failures: string[]) => void;
  /** The request's client address (server/http/client-address.ts), which sign-ups are limited by. */
  clientAddress: ClientAddress;
}

export async function general(deps: GeneralDeps) {
  const contract = await loadSurfaceContract('general');
  const { limit, takeMore } = planLimiter(deps.limitStores, deps.clientAddress);
  const leases = accountLeases(deps.db, deps.notifications, {
    onError: (error) =>
      deps.logger.warn(
        { err: error },
        'could not renew or check the leases held; retried at the next change or renewal',
      ),
  });
  const streams = {
    settings: deps.streamSettings,
    open: openStreams(leases),
    readiness: readinessGroups(deps.db, deps.notifications),
    notifications: deps.notifications,
  };
  const serve = serveSurface<GeneralPrincipal, GeneralContext>({
    contract,
    authenticators: generalAuthenticators(deps.db, deps.tokens, deps.logger, deps.now, deps.notifications),
    challenge: (failure) => (failure === 'invalid' ? `${REALM}, error="invalid_token"` : REALM),
    unauthorizedDetail: (failure) =>
      failure === 'missing'
        ? 'This request needs an OAuth access token (Authorization: Bearer <token>) or a personal API key (X-Service-API-Key).'
        : 'The access token is expired, revoked or malformed, or the API key is unknown or revoked.',
    beforeAuthentication: async (req, res) => {
      // RFC 6750 §2: one method per request. Any two carriers are refused, equal or not, before either is looked up.
      const carriers = credentialCarriers(req);
      if (carriers.length > 1) throw problems.severalCredentials(carriers, REALM);
      await deps.authFailures.check(req, res);
    },
    onInvalidCredentials: deps.authFailures.recordFailure,
    authorize: authorizeScopes,
    limit,
    handlers: generalHandlers,
    context: {
      db: deps.db,
      now: deps.now,
      lifecycle: deps.lifecycle,
      apiVersion: contract.definition.info.version,
      tutor: deps.tutor ?? localTutor(),
      aiQueue: deps.aiQueue ?? createAiQueue(),
      exports: deps.exports ?? createExportLimits(),
      leases,
      streams,
      webhooks: deps.webhooks,
      secrets: deps.webhooks.secrets,
      authFailures: deps.authFailures,
      passwordAttempts: passwordAttempts(deps.limitStores),
      takeMoreRequests: takeMore,
      publicUrl: deps.tokens.issuer,
      ...(deps.paymentProviderSecret ? { paymentProviderSecret: deps.paymentProviderSecret } : {}),
    },
    ...(deps.onContractViolation ? { onContractViolation: deps.onContractViolation } : {}),
  });
  // The spec version each response was produced under (documented in the spec's Versioning section), errors included.
  const apiVersion = contract.definition.info.version;
  const serveVersioned: typeof serve = (req, res) => {
    res.setHeader('API-Version', apiVersion);
    return serve(req, res);
  };
  return { serve: serveVersioned, scopes: scopeDescriptions(contract), allowedMethods: contract.allowedMethods };
}

/** Scope → description, as the spec's OAuth2 security scheme declares them (shown on the consent page). */
function scopeDescriptions(contract: Contract): Record<string, string> {
  const scheme = contract.definition.components?.securitySchemes?.OAuth2 as
    | { flows?: { authorizationCode?: { scopes?: Record<string, string> } } }
    | undefined;
  return scheme?.flows?.authorizationCode?.scopes ?? {};
}

/**
 * Limits per account by plan: minute and day windows for every request, an hour window on top for /api/ai/*.
 * Contractual accounts count in pools of their own, so a busy standard plan never shares their counters.
 * Account creation is limited per client address, invalid forms (400) not counted. The payment provider's callback
 * is not limited: its signature is checked before anything is read, so an unsigned flood costs one HMAC a request, and
 * a limit could drop payments.
 * The plan quotas fail open when the counters are unavailable (the API stays up, uncounted, a warning logged);
 * the sign-up throttle fails closed (503).
 */
function planLimiter(stores: LimitStores, clientAddress: ClientAddress) {
  const HOUR = 60 * 60_000;
  const byAccount = (pool: string) => ({
    all: createLimiter<GeneralPrincipal>(
      pool,
      [
        { name: 'minute', windowMs: 60_000, limitOf: (p) => p.limits.per_minute, keyOf: (p) => p.user_id },
        { name: 'day', windowMs: 24 * HOUR, limitOf: (p) => p.limits.per_day, keyOf: (p) => p.user_id },
      ],
      stores,
      { subject: 'this account', onStoreFailure: 'allow' },
    ),
    ai: createLimiter<GeneralPrincipal>(
      `${pool}-ai`,
      [{ name: 'hour', windowMs: HOUR, limitOf: (p) => p.limits.ai_per_hour, keyOf: (p) => p.user_id }],
      stores,
      { subject: 'this account on /api/ai/*', onStoreFailure: 'allow' },
    ),
  });
  const pools = { standard: byAccount('general'), contract: byAccount('general-contract') };
  const signup = createLimiter<string>(
    'general-signup',
    [{ name: 'hour', windowMs: HOUR, limitOf: () => SIGNUPS_PER_HOUR, keyOf: (ip) => ip }],
    stores,
    // A throttle against sign-up floods fails closed: without counters it would not throttle at all.
    { subject: 'account creation from this address', onStoreFailure: 'refuse' },
  );

  const feedReads = createLimiter<string>(
    'general-calendar-feed',
    [{ name: 'minute', windowMs: 60_000, limitOf: () => FEED_READS_PER_MINUTE, keyOf: (token) => token }],
    stores,
    // Fails open like the plan quotas: calendar apps keep reading while the counters are away.
    { subject: 'this calendar feed URL', onStoreFailure: 'allow' },
  );

  const limit = async (
    req: IncomingMessage,
    res: ServerResponse,
    principal: GeneralPrincipal | undefined,
    operation: { operationId?: string },
  ) => {
    if (!principal) {
      // Secured operations without a valid credential are refused with 401 and count nowhere.
      if (operation.operationId === 'createAccount') {
        const giveBack = await signup(req, res, clientAddress(req));
        // A form refused as invalid (400: a typo, a short password) made nothing: only accounts made, and attempts
        // that find an address or nickname taken (409), spend the address's quota.
        res.once('finish', () => {
          if (res.statusCode === 400) void giveBack();
        });
      }
      // A feed's URL is its credential: its reads count per URL (the hash keeps tokens out of the counters' keys).
      const feed = operation.operationId === 'getCalendarFeed' ? FEED_PATH.exec(requestPath(req)) : null;
      if (feed) await feedReads(req, res, hashSecret(feed[1]!));
      return;
    }
    const pool = principal.plan === 'contract' ? pools.contract : pools.standard;
    await pool.all(req, res, principal);
    if (requestPath(req).startsWith(AI_PREFIX)) await pool.ai(req, res, principal);
  };
  // A request that stands for several (a sync push: one per command) takes the others from the account's windows.
  const takeMore: TakeMoreRequests<GeneralPrincipal> = (principal, count) =>
    (principal.plan === 'contract' ? pools.contract : pools.standard).all.takeMore(principal, count);
  return { limit, takeMore };
}
