// The one catalog of errors. Every error response of the service is built here, as RFC 9457 problem+json
// with a stable `code`, whose status and title come from the table of codes (problem-codes.ts). The platform and
// the handlers throw problems; services and queries throw refusals without transport (domain/errors.ts), which
// problemOf maps here, once, for every surface.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isDatabaseUnavailable, isSerializationFailure } from '../../db/errors.ts';
import {
  AuthenticationError,
  InputError,
  LimitError,
  ReviewTimeError,
  ServiceError,
  UnavailableError,
  type FieldError,
  type UndeliverableCode,
} from '../../domain/errors.ts';
import { REALM } from '../auth/realm.ts';
import { PROBLEM_CODES, type ProblemCode } from './problem-codes.ts';
import { requestPath } from './request-target.ts';
import { sendBody, serialize } from './send-body.ts';

export const PROBLEM_TYPE_BASE = 'https://study-companion.example/problems#';

/** What a 503 asks clients to wait: about how long the pool or the Redis client takes to reconnect. */
export const RETRY_AFTER_SECONDS = 5;

/** What a 503 for write contention asks clients to wait: the other writes of the student take milliseconds. */
export const CONTENTION_RETRY_AFTER_SECONDS = 1;

export class Problem extends Error {
  readonly status: number;
  readonly title: string;

  constructor(
    readonly code: ProblemCode,
    readonly detail: string,
    readonly extra: { errors?: FieldError[]; headers?: Record<string, string> } = {},
  ) {
    super(detail);
    ({ status: this.status, title: this.title } = PROBLEM_CODES[code]);
  }
}

export const problems = {
  invalidRequest: (errors: FieldError[]) =>
    new Problem(
      'invalid_request',
      `The request has ${errors.length} invalid part${errors.length === 1 ? '' : 's'}; see errors.`,
      { errors },
    ),
  malformedBody: (detail: string) =>
    new Problem('invalid_request', detail, { errors: [{ path: 'body', message: detail }] }),
  /** RFC 6750 §2 and §3.1: a request uses one method to send its credential; more than one is invalid_request. */
  severalCredentials: (carriers: string[], challenge: string) =>
    new Problem('invalid_request', `The request carries credentials in ${carriers.join(' and ')}; send exactly one.`, {
      errors: carriers.map((name) => ({
        path: `header.${name}`,
        message: 'is one of several credentials; send only one',
      })),
      headers: { 'WWW-Authenticate': `${challenge}, error="invalid_request"` },
    }),
  /** Refusals of Node's HTTP parser, before any request exists (server/http/client-errors.ts). */
  malformedRequest: () =>
    new Problem('malformed_request', 'The request is not valid HTTP/1.1 (its request line or a header).'),
  headersTooLarge: () =>
    new Problem('headers_too_large', "The request's headers are larger than the service reads (16 KiB)."),
  requestTimeout: () =>
    new Problem('request_timeout', 'The request did not arrive in full within the time the service waits for it.'),
  unauthorized: (detail: string, challenge: string) =>
    new Problem('unauthorized', detail, { headers: { 'WWW-Authenticate': challenge } }),
  insufficientScope: (required: readonly string[], granted: readonly string[], challenge: string) =>
    new Problem(
      'insufficient_scope',
      `This operation needs the scope ${required.join(' ')}; the credential has ${granted.length > 0 ? granted.join(' ') : 'none'}.`,
      { headers: { 'WWW-Authenticate': `${challenge}, error="insufficient_scope", scope="${required.join(' ')}"` } },
    ),
  /** A sensitive account operation whose caller did not prove again who they are (server/auth/reauthentication.ts). */
  reauthenticationRequired: (detail: string) => new Problem('reauthentication_required', detail),
  notFound: (detail: string) => new Problem('not_found', detail),
  conflict: (detail: string) => new Problem('conflict', detail),
  /** A webhook endpoint's URL the service will not deliver to; `code` says why (services/webhooks/target-address.ts). */
  undeliverableUrl: (code: UndeliverableCode, reason: string) =>
    new Problem(code, `Webhooks cannot be sent to this URL: ${reason}.`, {
      errors: [{ path: 'body.url', message: reason }],
    }),
  methodNotAllowed: (method: string, path: string, allow: string[], why = '') =>
    new Problem('method_not_allowed', `${method} is not allowed on ${path}${why}.`, {
      headers: { Allow: allow.join(', ') },
    }),
  payloadTooLarge: (limitBytes: number) =>
    new Problem('payload_too_large', `The request body exceeds ${Math.floor(limitBytes / 1024)} KiB.`),
  idempotencyKeyReused: () =>
    new Problem(
      'idempotency_key_reused',
      'This Idempotency-Key was used with a different request; use a new key for a new request.',
    ),
  /** A review dated in the future or before the offline window (domain/srs.ts OFFLINE_REVIEW_WINDOW_DAYS). */
  reviewedAtOutOfRange: (path: string, days: number) =>
    new Problem('reviewed_at_out_of_range', `reviewed_at must be within the past ${days} days and not in the future.`, {
      errors: [{ path, message: `must be within the past ${days} days and not in the future` }],
    }),
  /** Too many wrong passwords for one account (server/auth/password-attempts.ts): refused even when right, until the window ends. */
  passwordAttemptsExceeded: (limit: number, windowMinutes: number, retryAfterSeconds: number) =>
    new Problem(
      'password_attempts_exceeded',
      `This account had ${limit} wrong passwords in ${windowMinutes} minutes; no password is checked for it until ${retryAfterSeconds} seconds from now.`,
      { headers: { 'Retry-After': String(retryAfterSeconds) } },
    ),
  rateLimited: (detail: string) => new Problem('rate_limited', detail),
  /** An account (or one of its conversations) already has as many AI replies queued or generating as it may. */
  tooManyConcurrentReplies: (detail: string, retryAfterSeconds: number) =>
    new Problem('too_many_concurrent_replies', `${detail} Retry in ${retryAfterSeconds} seconds.`, {
      headers: { 'Retry-After': String(retryAfterSeconds) },
    }),
  /** A dependency (the database, the limit counters) failed or timed out: the request may succeed when retried. */
  serviceUnavailable: (detail = 'A service this request depends on is unavailable or too slow right now.') =>
    new Problem('service_unavailable', `${detail} Retry in ${RETRY_AFTER_SECONDS} seconds.`, {
      headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
    }),
  /**
   * The database aborted a write twice as a deadlock or a serialization failure (db/student-transaction.ts): a
   * concurrency condition, not a fault of the request, so a 503 that asks for a prompt retry.
   */
  writeContention: () =>
    new Problem(
      'service_unavailable',
      `Other changes to the same data were being written at the same moment. Retry in ${CONTENTION_RETRY_AFTER_SECONDS} second.`,
      {
        headers: { 'Retry-After': String(CONTENTION_RETRY_AFTER_SECONDS) },
      },
    ),
  unknownStudent: (detail: string) => new Problem('unknown_student', detail),
  /** A feature its operator has not set up: the caller (a provider that retries) may try again later. */
  notConfigured: (detail: string, retryAfterSeconds: number) =>
    new Problem('not_configured', `${detail} Retry in ${retryAfterSeconds} seconds.`, {
      headers: { 'Retry-After': String(retryAfterSeconds) },
    }),
  internal: () =>
    new Problem('internal_error', 'Something failed on our side; it has been logged with the request id.'),
};

/**
 * The problem a refusal from below the edge (domain/errors.ts) is answered with, or a problem thrown at the edge as it
 * is; undefined for any other error. The refusal's code is the problem's (a code the catalogue lacks does not
 * compile); its message is the detail; a wait it names is `Retry-After`.
 */
export function problemOf(error: unknown): Problem | undefined {
  if (error instanceof Problem) return error;
  if (!(error instanceof ServiceError)) return undefined;
  if (error instanceof InputError) return problems.invalidRequest([...error.errors]);
  if (error instanceof ReviewTimeError) return problems.reviewedAtOutOfRange(error.path, error.days);
  if (error instanceof UnavailableError) return problems.serviceUnavailable(error.message);
  if (error instanceof AuthenticationError) {
    return problems.unauthorized(error.message, error.tokenError ? `${REALM}, error="${error.tokenError}"` : REALM);
  }
  const code: ProblemCode = error.code;
  const retryAfter = error instanceof LimitError ? error.bound.retryAfterSeconds : undefined;
  const headers = retryAfter === undefined ? undefined : { 'Retry-After': String(retryAfter) };
  return new Problem(code, error.message, headers ? { headers } : {});
}

/**
 * The 503 for an error that comes from a dependency (the database down, terminated or too slow; the limit counters
 * unavailable for a limiter that fails closed; a write aborted twice as a deadlock), or undefined for any other error,
 * which is a bug (500). The one place that draws the line, for the Express error handler and for the OAuth endpoints.
 */
export function dependencyFailure(error: unknown): Problem | undefined {
  const problem = problemOf(error);
  if (problem) return problem.status === 503 ? problem : undefined;
  if (isSerializationFailure(error)) return problems.writeContention();
  return isDatabaseUnavailable(error) ? problems.serviceUnavailable() : undefined;
}

/** Logs a dependency failure by its code and message only: pg errors carry the whole client, settings included. */
export function logDependencyFailure(req: IncomingMessage, error: unknown): void {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  req.log.warn({ code, reason: message }, 'a dependency failed: answered 503');
}

/** A problem's document but for what only a response has (its instance and request id): also a sync command's result. */
export function problemFields(problem: Problem) {
  return {
    type: PROBLEM_TYPE_BASE + problem.code,
    title: problem.title,
    status: problem.status,
    code: problem.code,
    detail: problem.detail,
    ...(problem.extra.errors ? { errors: problem.extra.errors } : {}),
  };
}

/** Writes a problem as the response; headers set earlier (rate limits, request id) are kept. */
export function sendProblem(req: IncomingMessage, res: ServerResponse, problem: Problem): void {
  for (const [name, value] of Object.entries(problem.extra.headers ?? {})) res.setHeader(name, value);
  const body = { ...problemFields(problem), instance: requestPath(req), request_id: String(req.id) };
  sendBody(req, res, problem.status, 'application/problem+json; charset=utf-8', serialize(JSON.stringify(body)));
}
