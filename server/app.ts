// The HTTP application: shared middleware, the surfaces, and the last-resort 404 and error handlers.
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { Logger } from 'pino';
import type { Db } from '../db/connect.ts';
import type { Config } from './config.ts';
import { DOCS_PATHS, docsRoutes } from './docs.ts';
import type { Notifications } from '../db/notifications.ts';
import { DEFAULT_STREAM_SETTINGS, type StreamSettings } from './events/readiness-stream.ts';
import type { Tutor } from '../handlers/general/tutor/types.ts';
import type { AiQueue } from './ai-queue.ts';
import type { AccessTokenIssuer } from './auth/access-tokens.ts';
import type { WebhookEndpointSettings } from './handler-types.ts';
import { authFailureLimit } from './auth-failure-limit.ts';
import { GENERAL_PREFIX, general } from './general/index.ts';
import { createLifecycle, type Lifecycle } from './lifecycle.ts';
import { requestLogging } from './logger.ts';
import { requestMetrics } from './metrics.ts';
import { oauthRoutes } from './oauth/router.ts';
import { PARTNER_V1_PREFIX, partnerV1 } from './partner-v1/index.ts';
import { PROBE_PATHS, probeRoutes } from './probes.ts';
import { keepRawBody } from './raw-body.ts';
import { SECURITY_HEADERS, securityHeaders } from './http/security-headers.ts';
import { dependencyFailure, logDependencyFailure, Problem, problems, sendProblem } from './problems.ts';
import type { LimitStores } from './rate-limits.ts';

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
  webhooks: WebhookEndpointSettings;
  config: Pick<Config, 'bodyLimitBytes' | 'validateResponses' | 'trustProxy'>;
  now?: () => Date;
  /** The process's stop (readiness, streams told to end, work the stop waits for); absent: one that never stops. */
  lifecycle?: Lifecycle;
  /** The notification path between processes (db/notifications.ts), which the readiness stream follows. */
  notifications: Notifications;
  /** Heartbeat and longest duration of the readiness stream; absent: DEFAULT_STREAM_SETTINGS. */
  streamSettings?: StreamSettings;
}

/** Methods whose request body means something (RFC 9110); other methods' bodies are never read. */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

export async function createApp(deps: AppDeps): Promise<express.Express> {
  const { logger, config } = deps;
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', config.trustProxy);
  const lifecycle = deps.lifecycle ?? createLifecycle();
  app.use(requestMetrics());
  app.use(requestLogging(logger, { quietPaths: PROBE_PATHS, sameOnEveryResponse: SECURITY_HEADERS }));
  app.use(onlyUnder([...PROBE_PATHS], probeRoutes({ db: deps.db, limitStores: deps.limitStores, lifecycle })));
  app.use(securityHeaders());
  app.use(refuseLargeBodies(config.bodyLimitBytes));
  // The bytes are kept beside the parsed body: a signature (the payment provider's) is verified over them, not over a
  // re-serialisation.
  const json = express.json({ limit: config.bodyLimitBytes, verify: keepRawBody });
  app.use((req, res, next) => (BODY_METHODS.has(req.method) ? json(req, res, next) : next()));

  // A person who opens the service's address in a browser wants the reference.
  app.get('/', (_req, res) => res.redirect(302, '/docs'));
  // Before the surfaces: /api/v1/docs lies under the partner prefix, whose router answers everything there.
  app.use(onlyUnder(Object.values(DOCS_PATHS), docsRoutes()));

  const now = deps.now ?? (() => new Date());
  // One count of failed authentications per address for both surfaces: a guesser gains nothing by switching.
  const authFailures = authFailureLimit(deps.limitStores);
  const onContractViolation = config.validateResponses
    ? (req: Request, failures: string[]) => req.log.error({ failures }, 'response breaks the contract')
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
  app.use((req, res, next) => (isUnder(req.path, PARTNER_V1_PREFIX) ? partner(req, res, next) : next()));

  const generalSurface = await general({
    db: deps.db,
    logger,
    limitStores: deps.limitStores,
    authFailures,
    tokens: deps.tokens,
    now,
    lifecycle,
    notifications: deps.notifications,
    streamSettings: deps.streamSettings ?? DEFAULT_STREAM_SETTINGS,
    webhooks: deps.webhooks,
    ...(deps.tutor ? { tutor: deps.tutor } : {}),
    ...(deps.paymentProviderSecret ? { paymentProviderSecret: deps.paymentProviderSecret } : {}),
    ...(deps.aiQueue ? { aiQueue: deps.aiQueue } : {}),
    ...(onContractViolation ? { onContractViolation } : {}),
  });
  app.use((req, res, next) => (isUnder(req.path, GENERAL_PREFIX) ? generalSurface.serve(req, res, next) : next()));
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

  app.use((req: Request, res: Response) => sendProblem(req, res, problems.notFound(`No operation exists at ${req.path}.`)));
  app.use(renderError(config.bodyLimitBytes));
  return app;
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
  return (req: Request, res: Response, next: NextFunction) => {
    const declared = Number(req.get('content-length') ?? 0);
    if (declared > limitBytes) {
      res.setHeader('Connection', 'close'); // the unread body makes the connection unusable
      sendProblem(req, res, problems.payloadTooLarge(limitBytes));
      return;
    }
    next();
  };
}

function renderError(bodyLimitBytes: number) {
  return (error: unknown, req: Request, res: Response, _next: NextFunction) => {
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
function toProblem(error: unknown, req: Request, bodyLimitBytes: number): Problem {
  if (error instanceof Problem) return error;
  const unavailable = dependencyFailure(error);
  if (unavailable) {
    logDependencyFailure(req, error);
    return unavailable;
  }
  const type = (error as { type?: unknown } | null)?.type;
  if (error instanceof URIError) return problems.invalidRequest([{ path: 'path', message: 'is not valid percent-encoding' }]);
  if (type === 'entity.too.large') return problems.payloadTooLarge(bodyLimitBytes);
  if (type === 'entity.parse.failed') return problems.malformedBody('The request body is not valid JSON.');
  if ((typeof type === 'string' && type.startsWith('encoding.')) || type === 'charset.unsupported') {
    return problems.malformedBody('The request body uses an unsupported encoding or charset.');
  }
  // A body that fails to decode as its Content-Encoding says (a plain body sent as gzip): body-parser passes zlib's
  // error on as a 4xx http-error without a type.
  const status = (error as { status?: unknown } | null)?.status;
  if ((error as { expose?: unknown } | null)?.expose === true && typeof status === 'number' && status >= 400 && status < 500) {
    return problems.malformedBody('The request body does not decode as its Content-Encoding says.');
  }
  req.log.error({ err: error }, 'unhandled error');
  return problems.internal();
}
