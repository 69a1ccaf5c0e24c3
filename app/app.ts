// The HTTP application: the API surfaces, served without Express (server/http/api-requests.ts), and an Express app for
// every other path (OAuth, the docs, the probes), with the same middleware in front of both and the same problems.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { Logger } from 'pino';
import type { Db } from '../db/connect.ts';
import type { Config } from './config.ts';
import { DOCS_PATHS, docsRoutes } from '../server/contract/docs.ts';
import type { Notifications } from '../db/notifications.ts';
import { DEFAULT_STREAM_SETTINGS, type StreamSettings } from '../services/streams/stream-settings.ts';
import type { Tutor } from '../services/ai/tutor/types.ts';
import type { AiQueue } from '../services/ai/queue.ts';
import type { ExportLimits } from '../services/exports/export-limits.ts';
import type { AccessTokenIssuer } from '../server/auth/access-tokens.ts';
import type { WebhookEndpointSettings } from '../services/webhooks/endpoint-settings.ts';
import { authFailureLimit } from '../server/auth/auth-failure-limit.ts';
import { apiRequests, BODY_METHODS } from '../server/http/api-requests.ts';
import { clientAddressBy } from '../server/http/client-address.ts';
import { cors } from '../server/http/cors.ts';
import { requestPath } from '../server/http/request-target.ts';
import { GENERAL_PREFIX, general } from './general.ts';
import { createLifecycle, type Lifecycle } from '../server/process/lifecycle.ts';
import { requestLogging } from '../server/process/logger.ts';
import { requestMetrics } from '../server/process/metrics.ts';
import { oauthRoutes } from '../server/oauth/router.ts';
import { PARTNER_V1_PREFIX, partnerV1 } from './partner-v1.ts';
import { PROBE_PATHS, probeRoutes } from './probes.ts';
import { keepRawBody } from '../server/http/raw-body.ts';
import { SECURITY_HEADERS, securityHeaders } from '../server/http/security-headers.ts';
import {
  dependencyFailure,
  logDependencyFailure,
  Problem,
  problemOf,
  problems,
  sendProblem,
} from '../server/http/problems.ts';
import type { LimitStores } from '../server/limits/rate-limits.ts';

export interface AppDeps {
  db: Db;
  logger: Logger;
  limitStores: LimitStores;
  /** Signs and verifies the general surface's OAuth access tokens. */
  tokens: AccessTokenIssuer;
  /** The AI tutor of the general surface; absent: the built-in local tutor. */
  tutor?: Tutor;
  /** PAYMENT_PROVIDER_SECRET; absent: payment provider events are refused (503 not_configured). */
  paymentProviderSecret?: string;
  /** Generation slots of the AI tutor; absent: the process's default queue. */
  aiQueue?: AiQueue;
  /** The account export's bounds (EXPORT_MAX_READING); absent: the process's defaults. */
  exports?: ExportLimits;
  webhooks: WebhookEndpointSettings;
  /** `corsOrigins` absent: no cross-origin access, as when CORS_ORIGINS is empty. */
  config: Pick<Config, 'bodyLimitBytes' | 'validateResponses' | 'trustProxy'> & Partial<Pick<Config, 'corsOrigins'>>;
  now?: () => Date;
  /** The process's stop (readiness, streams told to end, work the stop waits for); absent: one that never stops. */
  lifecycle?: Lifecycle;
  /** The notification path between processes (db/notifications.ts), which the readiness stream follows. */
  notifications: Notifications;
  /** Heartbeat and longest duration of the readiness stream; absent: DEFAULT_STREAM_SETTINGS. */
  streamSettings?: StreamSettings;
}

export async function createApp(deps: AppDeps): Promise<RequestListener> {
  const { logger, config } = deps;
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', config.trustProxy);
  const lifecycle = deps.lifecycle ?? createLifecycle();
  const metrics = requestMetrics();
  const logging = requestLogging(logger, { quietPaths: PROBE_PATHS, sameOnEveryResponse: SECURITY_HEADERS });
  const headers = securityHeaders();
  const bodyLimit = refuseLargeBodies(config.bodyLimitBytes);
  // The bytes are kept beside the parsed body: a signature (the payment provider's) is verified over them, not over a
  // re-serialisation.
  const json = express.json({ limit: config.bodyLimitBytes, verify: keepRawBody });
  const renderError = errorRenderer(config.bodyLimitBytes);

  app.use(metrics, logging);
  app.use(onlyUnder([...PROBE_PATHS], probeRoutes({ db: deps.db, limitStores: deps.limitStores, lifecycle })));
  app.use(headers, bodyLimit);
  app.use((req, res, next) => (BODY_METHODS.has(req.method) ? json(req, res, next) : next()));
  // A person who opens the service's address in a browser wants the reference.
  app.get('/', (_req, res) => res.redirect(302, '/docs'));
  app.use(onlyUnder(Object.values(DOCS_PATHS), docsRoutes()));

  const now = deps.now ?? (() => new Date());
  // TRUST_PROXY means the same on every path: Express's compiled setting decides the API surfaces' client addresses
  // too.
  const clientAddress = clientAddressBy(app.get('trust proxy fn'));
  // One count of failed authentications per address for both surfaces: a guesser gains nothing by switching.
  const authFailures = authFailureLimit(deps.limitStores, clientAddress);
  const onContractViolation = config.validateResponses
    ? (req: IncomingMessage, failures: string[]) => req.log.error({ failures }, 'response breaks the contract')
    : undefined;
  const partner = await partnerV1({
    db: deps.db,
    logger,
    limitStores: deps.limitStores,
    authFailures,
    now,
    lifecycle,
    notifications: deps.notifications,
    ...(onContractViolation ? { onContractViolation } : {}),
  });
  const generalSurface = await general({
    db: deps.db,
    logger,
    limitStores: deps.limitStores,
    authFailures,
    clientAddress,
    tokens: deps.tokens,
    now,
    lifecycle,
    notifications: deps.notifications,
    streamSettings: deps.streamSettings ?? DEFAULT_STREAM_SETTINGS,
    webhooks: deps.webhooks,
    ...(deps.tutor ? { tutor: deps.tutor } : {}),
    ...(deps.paymentProviderSecret ? { paymentProviderSecret: deps.paymentProviderSecret } : {}),
    ...(deps.aiQueue ? { aiQueue: deps.aiQueue } : {}),
    ...(deps.exports ? { exports: deps.exports } : {}),
    ...(onContractViolation ? { onContractViolation } : {}),
  });
  app.use(
    oauthRoutes({
      db: deps.db,
      tokens: deps.tokens,
      logger,
      limitStores: deps.limitStores,
      now,
      scopes: generalSurface.scopes,
      bodyLimitBytes: config.bodyLimitBytes,
    }),
  );
  app.use((req: Request, res: Response) =>
    sendProblem(req, res, problems.notFound(`No operation exists at ${req.path}.`)),
  );
  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => renderError(error, req, res));

  // The surfaces' own paths and methods: a preflight is answered for what the path serves.
  const allowedMethods = (path: string) =>
    (isUnder(path, PARTNER_V1_PREFIX) ? partner : generalSurface).allowedMethods(path);
  const corsOrigins = config.corsOrigins ?? [];
  const crossOrigin =
    corsOrigins.length > 0 ? [cors({ origins: corsOrigins, allowedMethods, pathOf: requestPath })] : [];
  const api = apiRequests({
    prepare: [metrics, logging, headers, ...crossOrigin, bodyLimit],
    parseBody: json,
    surfaces: [
      { prefix: PARTNER_V1_PREFIX, serve: partner.serve },
      { prefix: GENERAL_PREFIX, serve: generalSurface.serve },
    ],
    renderError,
  });
  const docsPaths = Object.values(DOCS_PATHS);
  return (req, res) => {
    const path = requestPath(req);
    // The docs of the partner surface lie under its prefix; Express serves them, as it does any path not under /api.
    if (!isUnder(path, GENERAL_PREFIX) || docsPaths.some((prefix) => isUnder(path.toLowerCase(), prefix)))
      app(req, res);
    else api(req, res, path);
  };
}

/**
 * A router that serves only paths under `prefixes` is entered only for them: Express walks every layer of a router it
 * enters, matching each against the path, which cost every API request the probes' and the docs' routes. Express
 * matches paths case-insensitively (and with or without a trailing slash), and so does this.
 */
function onlyUnder(prefixes: string[], router: RequestHandler): RequestHandler {
  return (req, res, next) => {
    const path = req.path.toLowerCase();
    return prefixes.some((prefix) => isUnder(path, prefix)) ? router(req, res, next) : next();
  };
}

function isUnder(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(prefix + '/');
}

/** Refuses a declared body over the limit before anything reads it, whatever the method. */
function refuseLargeBodies(limitBytes: number) {
  return (req: IncomingMessage, res: ServerResponse, next: () => void) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > limitBytes) {
      res.setHeader('Connection', 'close'); // the unread body makes the connection unusable
      sendProblem(req, res, problems.payloadTooLarge(limitBytes));
      return;
    }
    next();
  };
}

function errorRenderer(bodyLimitBytes: number) {
  return (error: unknown, req: IncomingMessage, res: ServerResponse) => {
    if (res.headersSent) {
      req.log.error({ err: error }, 'error after the response started');
      res.end();
      return;
    }
    sendProblem(req, res, toProblem(error, req, bodyLimitBytes));
  };
}

/**
 * Body-parser errors are the client's; a database that is down, terminated or too slow is a 503 worth retrying;
 * anything else unexpected is ours, logged and answered as a 500.
 */
function toProblem(error: unknown, req: IncomingMessage, bodyLimitBytes: number): Problem {
  const refusal = problemOf(error);
  if (refusal) return refusal;
  const unavailable = dependencyFailure(error);
  if (unavailable) {
    logDependencyFailure(req, error);
    return unavailable;
  }
  const type = (error as { type?: unknown } | null)?.type;
  if (error instanceof URIError)
    return problems.invalidRequest([{ path: 'path', message: 'is not valid percent-encoding' }]);
  if (type === 'entity.too.large') return problems.payloadTooLarge(bodyLimitBytes);
  if (type === 'entity.parse.failed') return problems.malformedBody('The request body is not valid JSON.');
  if ((typeof type === 'string' && type.startsWith('encoding.')) || type === 'charset.unsupported') {
    return problems.malformedBody('The request body uses an unsupported encoding or charset.');
  }
  // A body that fails to decode as its Content-Encoding says (a plain body sent as gzip): body-parser passes zlib's
  // error on as a 4xx http-error without a type.
  const status = (error as { status?: unknown } | null)?.status;
  if (
    (error as { expose?: unknown } | null)?.expose === true &&
    typeof status === 'number' &&
    status >= 400 &&
    status < 500
  ) {
    return problems.malformedBody('The request body does not decode as its Content-Encoding says.');
  }
  req.log.error({ err: error }, 'unhandled error');
  return problems.internal();
}
