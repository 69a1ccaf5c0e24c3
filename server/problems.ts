// The one catalog of errors. Every error response of the service is built here, as RFC 9457 problem+json
// with a stable `code` (documented in spec/components/schemas/Problem.yaml).
import type { Request, Response } from 'express';

export const PROBLEM_TYPE_BASE = 'https://study-companion.example/problems#';

export interface FieldError {
  path: string;
  message: string;
}

export class Problem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly title: string,
    readonly detail: string,
    readonly extra: { errors?: FieldError[]; headers?: Record<string, string> } = {},
  ) {
    super(detail);
  }
}

export const problems = {
  invalidRequest: (errors: FieldError[]) =>
    new Problem(400, 'invalid_request', 'Invalid request', `The request has ${errors.length} invalid part${errors.length === 1 ? '' : 's'}; see errors.`, { errors }),
  malformedBody: (detail: string) => new Problem(400, 'invalid_request', 'Invalid request', detail, { errors: [{ path: 'body', message: detail }] }),
  /** RFC 6750 §2 and §3.1: a request uses one method to send its credential; more than one is invalid_request. */
  severalCredentials: (carriers: string[], challenge: string) =>
    new Problem(400, 'invalid_request', 'Invalid request', `The request carries credentials in ${carriers.join(' and ')}; send exactly one.`, {
      errors: carriers.map((name) => ({ path: `header.${name}`, message: 'is one of several credentials; send only one' })),
      headers: { 'WWW-Authenticate': `${challenge}, error="invalid_request"` },
    }),
  unauthorized: (detail: string, challenge: string) =>
    new Problem(401, 'unauthorized', 'Unauthorized', detail, { headers: { 'WWW-Authenticate': challenge } }),
  insufficientScope: (required: readonly string[], granted: readonly string[], challenge: string) =>
    new Problem(
      403,
      'insufficient_scope',
      'Insufficient scope',
      `This operation needs the scope ${required.join(' ')}; the credential has ${granted.length > 0 ? granted.join(' ') : 'none'}.`,
      { headers: { 'WWW-Authenticate': `${challenge}, error="insufficient_scope", scope="${required.join(' ')}"` } },
    ),
  notFound: (detail: string) => new Problem(404, 'not_found', 'Not found', detail),
  conflict: (detail: string) => new Problem(409, 'conflict', 'Conflict', detail),
  methodNotAllowed: (method: string, path: string, allow: string[], why = '') =>
    new Problem(405, 'method_not_allowed', 'Method not allowed', `${method} is not allowed on ${path}${why}.`, { headers: { Allow: allow.join(', ') } }),
  payloadTooLarge: (limitBytes: number) =>
    new Problem(413, 'payload_too_large', 'Payload too large', `The request body exceeds ${Math.floor(limitBytes / 1024)} KiB.`),
  idempotencyKeyReused: () =>
    new Problem(422, 'idempotency_key_reused', 'Idempotency key reused', 'This Idempotency-Key was used with a different request; use a new key for a new request.'),
  rateLimited: (detail: string) => new Problem(429, 'rate_limited', 'Too many requests', detail),
  internal: () => new Problem(500, 'internal_error', 'Internal error', 'Something failed on our side; it has been logged with the request id.'),
};

/** Writes a problem as the response; headers set earlier (rate limits, request id) are kept. */
export function sendProblem(req: Request, res: Response, problem: Problem): void {
  for (const [name, value] of Object.entries(problem.extra.headers ?? {})) res.setHeader(name, value);
  res
    .status(problem.status)
    .type('application/problem+json')
    .send(
      JSON.stringify({
        type: PROBLEM_TYPE_BASE + problem.code,
        title: problem.title,
        status: problem.status,
        code: problem.code,
        detail: problem.detail,
        instance: req.path,
        request_id: String(req.id),
        ...(problem.extra.errors ? { errors: problem.extra.errors } : {}),
      }),
    );
}
