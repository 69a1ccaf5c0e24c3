// Serves one API surface from its contract: routing (404/405), security (401), limits (429), unstorable text and
// request validation (400) and dispatch to the typed handler of the operationId, in that order. Every refusal is a
// problem+json built by server/http/problems.ts; handlers signal their own refusals by throwing a Problem.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import type { Context, Operation } from 'openapi-backend';
import { routedMethod, type Contract } from './contract.ts';
import { fieldError } from './field-errors.ts';
import type { HandlerContext } from './handler-types.ts';
import type { SurfaceHandler } from '../http/api-requests.ts';
import { isFrozenBody, sendFrozenJson } from '../http/frozen-json.ts';
import { requestPath } from '../http/request-target.ts';
import { sendJson } from '../http/send-body.ts';
import { unstorableText } from '../http/input-guard.ts';
import { labelOperation } from '../process/metrics.ts';
import { problems } from '../http/problems.ts';
import { rawBodyOf } from '../http/raw-body.ts';

/**
 * What a security handler found: a principal, or why the credentials it looked at fail. A failure is an
 * `{ error }` object because that is what openapi-backend counts as an unsatisfied scheme.
 */
export type AuthOutcome<P> = { principal: P } | { error: 'missing' | 'invalid'; detail?: string };

export interface SurfaceOptions<P, C extends HandlerContext = HandlerContext> {
  contract: Contract;
  /** One function per security scheme of the spec, by scheme name. */
  authenticators: Record<string, (req: IncomingMessage) => Promise<AuthOutcome<P>>>;
  /** Sent with 401s; names the scheme and realm (and, per RFC 6750, the error when a credential was sent). */
  challenge: string | ((failure: 'missing' | 'invalid') => string);
  unauthorizedDetail: (failure: 'missing' | 'invalid') => string;
  /**
   * Runs once the request is routed to an operation, before any credential is looked up: throws a Problem to refuse
   * the request as it stands (several credentials at once, an address refused for failing too often).
   */
  beforeAuthentication?: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  /** Runs when the credentials sent fail (not when none were sent): throws a Problem (429) to refuse instead of 401. */
  onInvalidCredentials?: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  /** Runs after authentication, before limits: throws a Problem (403) when the principal may not call the operation. */
  authorize?: (principal: P, operation: Operation) => void;
  /**
   * Runs once the request is authenticated (or, for an operation without security, with no principal), before
   * validation, so invalid requests count too; throws a Problem (429) to refuse.
   */
  limit: (req: IncomingMessage, res: ServerResponse, principal: P | undefined, operation: Operation) => Promise<void>;
  /** Why a method is refused on an existing path (appended to the 405 detail). */
  methodNotAllowedReason?: string;
  handlers: Record<
    string,
    (input: any, context: C, http: { req: IncomingMessage; res: ServerResponse }) => Promise<HandlerOutcome>
  >;
  context: C;
  /** Called with each response that breaks the contract, when response validation is on. */
  onContractViolation?: (req: IncomingMessage, failures: string[]) => void;
}

/** A JSON result, or nothing when a streaming handler wrote the response itself. */
type HandlerOutcome = { status: number; body: unknown; headers?: Record<string, string> } | void;

export function serveSurface<P, C extends HandlerContext = HandlerContext>(
  options: SurfaceOptions<P, C>,
): SurfaceHandler {
  const { contract } = options;
  const api = contract.api;

  for (const [scheme, authenticate] of Object.entries(options.authenticators)) {
    api.registerSecurityHandler(scheme, (_c: Context, req: IncomingMessage) => authenticate(req));
  }
  api.register({
    notFound: (_c: Context, req: IncomingMessage) => {
      throw problems.notFound(`No operation exists at ${requestPath(req)}.`);
    },
    methodNotAllowed: (_c: Context, req: IncomingMessage) => {
      const path = requestPath(req);
      throw problems.methodNotAllowed(
        req.method ?? 'GET',
        path,
        contract.allowedMethods(path),
        options.methodNotAllowedReason,
      );
    },
    postRoutingHandler: async (c: Context, req: IncomingMessage, res: ServerResponse) => {
      if (!c.operation) return; // 404 or 405 follows
      // A response to an authenticated request answers for one credential: no shared cache may keep or pass it on
      // (X-Service-API-Key, unlike Authorization, does not keep shared caches off by itself). A handler whose response
      // carries a secret sets no-store; a stream or a download sets its own (better-sse would keep this one instead).
      if (traitsOf(c.operation).privateAnswer) res.setHeader('Cache-Control', 'private');
      await options.beforeAuthentication?.(req, res);
    },
    postSecurityHandler: async (c: Context, req: IncomingMessage, res: ServerResponse) => {
      labelOperation(res, c.operation.operationId);
      const principal = principalOf<P>(c);
      if (principal && options.authorize) options.authorize(principal, c.operation);
      await options.limit(req, res, principal, c.operation);
      // openapi-backend calls this before its unauthorizedHandler: an unauthenticated request is left to the 401.
      if (c.security?.authorized !== false) refuseUnstorableText(c);
    },
    unauthorizedHandler: async (c: Context, req: IncomingMessage, res: ServerResponse) => {
      labelOperation(res, c.operation.operationId);
      const outcomes = Object.values(c.security ?? {}) as Array<AuthOutcome<P> | undefined>;
      // openapi-backend turns a security handler that threw (the database is down, say) into a failed scheme; that is
      // our failure, not the client's, so it is rethrown (a 503 or a 500) rather than answered with a misleading 401.
      const thrown = outcomes.find((o) => o && 'error' in o && (o.error as unknown) instanceof Error);
      if (thrown && 'error' in thrown) throw thrown.error;
      const failure = outcomes.some((o) => o && 'error' in o && o.error === 'invalid') ? 'invalid' : 'missing';
      if (failure === 'invalid') await options.onInvalidCredentials?.(req, res);
      const challenge = typeof options.challenge === 'string' ? options.challenge : options.challenge(failure);
      // An authenticator that knows more (a key of the other surface) says so instead of the generic detail.
      const known = outcomes.find((o) => o && 'detail' in o && o.detail);
      throw problems.unauthorized(
        (known && 'detail' in known && known.detail) || options.unauthorizedDetail(failure),
        challenge,
      );
    },
    validationFail: (c: Context) => {
      throw problems.invalidRequest((c.validation.errors ?? []).map(fieldError));
    },
  });
  for (const [operationId, handler] of Object.entries(options.handlers)) {
    api.register(operationId, async (c: Context, req: IncomingMessage, res: ServerResponse) => {
      const input = {
        path: c.request.params,
        query: c.request.query,
        headers: declaredHeaders(c),
        body: c.request.requestBody,
        rawBody: rawBodyOf(req),
        principal: principalOf<P>(c),
      };
      // Held, so that a stop closes the database only after the handler is done with it (its client may be gone).
      const result = await options.context.lifecycle.hold(handler(input, options.context, { req, res }));
      if (!result) return; // a streaming handler has answered
      res.statusCode = result.status;
      for (const [name, value] of Object.entries(result.headers ?? {})) res.setHeader(name, value);
      if (result.body === undefined) res.end();
      // A weak ETag on a JSON body, and 304 to a matching If-None-Match (partner v1 documents it for polling). A frozen
      // body (kept reference data) was serialized once.
      else if (isFrozenBody(result.body)) sendFrozenJson(req, res, result.status, result.body);
      else sendJson(req, res, result.status, result.body);
      // Checked as sent, so the ETag and a 304 are seen, and read as a client reads the headers: one sent as several
      // field lines (RateLimit, one per window) is one value, the lines joined with ", " (RFC 9110 section 5.3).
      if (options.onContractViolation) {
        const headers = Object.fromEntries(
          Object.entries(res.getHeaders()).map(([k, v]) => [k.toLowerCase(), Array.isArray(v) ? v.join(', ') : v]),
        );
        const failures = contract.checkResponse(
          c.operation,
          { status: res.statusCode, headers, body: result.body },
          { bodiless: res.statusCode === 304 },
        );
        if (failures.length > 0) options.onContractViolation(req, failures);
      }
    });
  }

  return async (req, res) => {
    const url = req.url ?? '/';
    const queryStart = url.indexOf('?');
    const request = {
      method: routedMethod(req.method ?? 'GET'),
      path: queryStart === -1 ? url : url.slice(0, queryStart),
      // Parsed as Express's default ("simple") query parser does: strings, and arrays of strings for repeated names.
      query: (queryStart === -1 ? {} : parseQuery(url.slice(queryStart + 1))) as Record<string, string>,
      headers: req.headers as Record<string, string>,
      body: (req as { body?: unknown }).body,
    };
    await api.handleRequest(request, req, res);
  };
}

/**
 * Before the spec's validation, after limits (so such requests count): text no schema rules out for every string at
 * once, but PostgreSQL refuses or would alter. One field is named, like a validation error.
 */
function refuseUnstorableText(c: Context): void {
  const unstorable =
    unstorableText(c.request.params, 'path') ??
    unstorableText(c.request.query, 'query') ??
    unstorableText(declaredHeaders(c), 'header') ??
    unstorableText(c.request.requestBody, 'requestBody');
  if (unstorable) throw problems.invalidRequest([unstorable]);
}

/** The header parameters the operation declares, under their spec names (HTTP header names are case-insensitive). */
function declaredHeaders(c: Context): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, field] of traitsOf(c.operation).headerParameters) {
    const value = c.request.headers[field];
    if (typeof value === 'string') headers[name] = value;
  }
  return headers;
}

/** What the pipeline reads of an operation on every request, found once per operation. */
interface OperationTraits {
  /** Secured and answered as JSON: the answer is marked `Cache-Control: private`. */
  privateAnswer: boolean;
  /** The header parameters: their spec names and their lower-case field names. */
  headerParameters: Array<readonly [string, string]>;
}

const traits = new WeakMap<Operation, OperationTraits>();

function traitsOf(operation: Operation): OperationTraits {
  let found = traits.get(operation);
  if (!found) {
    const parameters = (operation.parameters ?? []) as Array<{ in: string; name: string }>;
    found = {
      privateAnswer: (operation.security ?? []).length > 0 && !streams(operation),
      headerParameters: parameters.filter((p) => p.in === 'header').map((p) => [p.name, p.name.toLowerCase()] as const),
    };
    traits.set(operation, found);
  }
  return found;
}

/**
 * Whether the operation's streaming handler writes its response itself (server/contract/handler-types.ts): a
 * server-sent event stream, or a download (Content-Disposition).
 */
function streams(operation: Operation): boolean {
  const ok = operation.responses?.['200'] as
    | { content?: Record<string, unknown>; headers?: Record<string, unknown> }
    | undefined;
  return ok?.content?.['text/event-stream'] !== undefined || ok?.headers?.['Content-Disposition'] !== undefined;
}

/** The principal of the first satisfied security scheme. */
function principalOf<P>(c: Context): P | undefined {
  if (!c.security?.authorized) return undefined;
  for (const outcome of Object.values(c.security) as Array<AuthOutcome<P> | boolean | undefined>) {
    if (outcome && typeof outcome === 'object' && 'principal' in outcome) return outcome.principal;
  }
  return undefined;
}
