// Errors without transport, after Backstage's @backstage/errors: what a service or a query refuses, as a class that
// says what kind of refusal it is, a stable `code` and the numbers that explain it (a bound, a wait), never an HTTP
// status or header. They sit in domain/, the lowest layer, so that every layer can throw them and none needs the
// edge to do so; the edge (server/http/problems.ts problemOf) maps each to problem+json once, and the CLI and the
// worker read them as they are. The codes are the problem catalogue's (server/http/problem-codes.ts): the mapping
// does not compile with a code the catalogue lacks.

/** One invalid part of the input: where (`body.deck_ids.0`) and why. */
export interface FieldError {
  path: string;
  message: string;
}

type LimitCode =
  | 'endpoint_limit_reached'
  | 'calendar_feed_limit_reached'
  | 'series_limit_reached'
  | 'room_limit_reached'
  | 'room_join_limit_reached'
  | 'room_full'
  | 'export_in_progress'
  | 'too_many_streams';

/** Every code a refusal below the edge carries. */
export type ServiceCode =
  | 'not_found'
  | 'invalid_request'
  | 'unauthorized'
  | 'invalid_signature'
  | 'room_owner_only'
  | 'room_timer_conflict'
  | 'endpoint_disabled'
  | 'idempotency_key_reused'
  | 'cursor_expired'
  | 'sync_token_expired'
  | 'reviewed_at_out_of_range'
  | LimitCode
  | 'service_unavailable';

/** A refusal a service decides: its code, and a message that says it to the person who asked. */
export abstract class ServiceError extends Error {
  abstract readonly code: ServiceCode;

  override get name(): string {
    return this.constructor.name;
  }
}

/** No such record that the caller may see. */
export class NotFoundError extends ServiceError {
  readonly code = 'not_found';
}

/** Input the contract lets through and the service refuses, each invalid part named. */
export class InputError extends ServiceError {
  readonly code = 'invalid_request';

  constructor(readonly errors: readonly FieldError[]) {
    super(errors.map((error) => `${error.path} ${error.message}`).join('; '));
  }
}

/** A credential that no longer stands; `tokenError` is the RFC 6750 error a client reads to sign in again. */
export class AuthenticationError extends ServiceError {
  readonly code = 'unauthorized';

  constructor(
    message: string,
    readonly tokenError?: 'invalid_token',
  ) {
    super(message);
  }
}

/** A signed callback whose signature is missing, wrong or too old: the signature is its only credential. */
export class SignatureError extends ServiceError {
  readonly code = 'invalid_signature';
}

/** Who the caller is lets them do this to someone else's record, but not this. */
export class NotAllowedError extends ServiceError {
  constructor(
    readonly code: 'room_owner_only',
    message: string,
  ) {
    super(message);
  }
}

/** The record's state does not allow the change; read it again and act on it as it is. */
export class ConflictError extends ServiceError {
  constructor(
    readonly code: 'room_timer_conflict' | 'endpoint_disabled' | 'idempotency_key_reused',
    message: string,
  ) {
    super(message);
  }
}

/**
 * A review dated outside the offline window (domain/srs.ts OFFLINE_REVIEW_WINDOW_DAYS): in the future, or more than
 * `days` back. `path` names the field (`body.reviewed_at`, `commands.3.args.reviewed_at`).
 */
export class ReviewTimeError extends ServiceError {
  readonly code = 'reviewed_at_out_of_range';

  constructor(
    readonly path: string,
    readonly days: number,
  ) {
    super(`reviewed_at must be within the past ${days} days and not in the future.`);
  }
}

/** What the caller asks for is gone for good (a cursor older than what is kept). */
export class GoneError extends ServiceError {
  constructor(
    readonly code: 'cursor_expired' | 'sync_token_expired',
    message: string,
  ) {
    super(message);
  }
}

/**
 * An account at one of its bounds (domain/bounds.ts): `max` is the bound, and `retryAfterSeconds`, where waiting
 * helps (a stream or an export held now), how long.
 */
export class LimitError extends ServiceError {
  constructor(
    readonly code: LimitCode,
    message: string,
    readonly bound: { max: number; retryAfterSeconds?: number },
  ) {
    super(message);
  }
}

/** A dependency the service needs is busy or down: the same request may succeed when retried. */
export class UnavailableError extends ServiceError {
  readonly code = 'service_unavailable';
}

/** The codes of a webhook URL the service refuses to deliver to (services/webhooks/target-address.ts says which). */
export type UndeliverableCode =
  | 'webhook_url_invalid'
  | 'webhook_url_not_https'
  | 'webhook_url_unresolvable'
  | 'webhook_url_not_public';
