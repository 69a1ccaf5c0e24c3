// Every problem `code` the service answers with, declared once: its status, its title and what it means. The problem
// builders (problems.ts) take status and title from here, so a code missing from this table does not compile, and the
// errors guide (docs/errors.md, written by `npm run generate`) is this table. The bounds it states are read from
// where the services read them (domain/bounds.ts), so the guide cannot drift from what is enforced.
import {
  EVENT_RETENTION_DAYS,
  MAX_FEEDS_PER_STUDENT,
  MAX_OPEN_SERIES,
  MAX_ROOM_MEMBERS,
  MAX_ROOMS_JOINED,
  MAX_ROOMS_OWNED,
} from '../../domain/bounds.ts';
import { OFFLINE_REVIEW_WINDOW_DAYS } from '../../domain/srs.ts';

export interface ProblemCodeEntry {
  status: number;
  /** The problem's `title`: short and stable, for people. */
  title: string;
  /** One line for the errors guide: when the code is answered and what a client does about it. */
  description: string;
}

export const PROBLEM_CODES = {
  invalid_request: {
    status: 400,
    title: 'Invalid request',
    description:
      'A parameter, header or the body does not match the spec (each invalid part is listed in `errors`), or the request carries more than one credential; fix the request before sending it again.',
  },
  reviewed_at_out_of_range: {
    status: 400,
    title: 'Review time out of range',
    description: `A review's \`reviewed_at\` is in the future or older than the offline window (${OFFLINE_REVIEW_WINDOW_DAYS} days); send the time the review happened, within the window.`,
  },
  webhook_url_invalid: {
    status: 400,
    title: 'Webhook URL refused',
    description: "A webhook endpoint's URL is not an absolute http(s) URL, or carries credentials.",
  },
  webhook_url_not_https: {
    status: 400,
    title: 'Webhook URL refused',
    description: "A webhook endpoint's URL uses plain http; webhooks are sent over https only.",
  },
  webhook_url_unresolvable: {
    status: 400,
    title: 'Webhook URL refused',
    description: "A webhook endpoint's host does not resolve in DNS.",
  },
  webhook_url_not_public: {
    status: 400,
    title: 'Webhook URL refused',
    description:
      "A webhook endpoint's host resolves to an address that is not public (loopback, private, link-local…).",
  },
  malformed_request: {
    status: 400,
    title: 'Malformed request',
    description:
      'The request is not valid HTTP/1.1 (its request line or a header could not be parsed); the connection is closed after the answer.',
  },
  unauthorized: {
    status: 401,
    title: 'Unauthorized',
    description:
      'No credential, or one that is unknown, expired or revoked; `WWW-Authenticate` names the scheme the surface expects.',
  },
  invalid_signature: {
    status: 401,
    title: 'Invalid signature',
    description: "A signed callback (the payment provider's events) whose signature is missing, wrong or too old.",
  },
  insufficient_scope: {
    status: 403,
    title: 'Insufficient scope',
    description: 'The credential lacks a scope the operation needs; the detail and `WWW-Authenticate` name it.',
  },
  reauthentication_required: {
    status: 403,
    title: 'Reauthentication required',
    description: 'A sensitive account operation needs the password again or a fresh sign-in.',
  },
  room_owner_only: {
    status: 403,
    title: 'Room owner only',
    description: "Only a study room's owner changes its join code or deletes it; a member leaves instead.",
  },
  not_found: {
    status: 404,
    title: 'Not found',
    description: 'No operation at this path, or no such record that the credential may see.',
  },
  method_not_allowed: {
    status: 405,
    title: 'Method not allowed',
    description: 'The path exists but not with this method; `Allow` lists the methods it has.',
  },
  conflict: {
    status: 409,
    title: 'Conflict',
    description:
      "The request contradicts the record's current state (a duplicate, or a change that state does not allow).",
  },
  endpoint_limit_reached: {
    status: 409,
    title: 'Endpoint limit reached',
    description: 'The student already has as many webhook endpoints as one may; delete one first.',
  },
  calendar_feed_limit_reached: {
    status: 409,
    title: 'Calendar feed limit reached',
    description: `The student already has as many calendar feeds as one may (${MAX_FEEDS_PER_STUDENT}); revoke one first.`,
  },
  series_limit_reached: {
    status: 409,
    title: 'Recurring series limit reached',
    description: `The student already has as many open recurring tasks as one may (${MAX_OPEN_SERIES}); end or delete one first.`,
  },
  room_limit_reached: {
    status: 409,
    title: 'Room limit reached',
    description: `The student already owns as many study rooms as one may (${MAX_ROOMS_OWNED}); delete one first.`,
  },
  room_join_limit_reached: {
    status: 409,
    title: 'Room join limit reached',
    description: `The student is already a member of as many study rooms as one may (${MAX_ROOMS_JOINED}, their own included); leave one first.`,
  },
  room_full: {
    status: 409,
    title: 'Room full',
    description: `The study room already has as many members as a room may (${MAX_ROOM_MEMBERS}).`,
  },
  room_timer_conflict: {
    status: 409,
    title: 'Room timer conflict',
    description:
      "The room's focus timer is not in a state the action applies to (a start while a session runs, a pause of what is not running…); read the room and act on its timer as it is.",
  },
  endpoint_disabled: {
    status: 409,
    title: 'Endpoint disabled',
    description: 'A test event was asked of a disabled webhook endpoint; enable it first.',
  },
  request_timeout: {
    status: 408,
    title: 'Request timeout',
    description:
      'The request (its headers and body) did not arrive in full within REQUEST_TIMEOUT_MS; the connection is closed. Send it again on a new connection.',
  },
  cursor_expired: {
    status: 410,
    title: 'Cursor expired',
    description: `A changes-feed cursor older than the ${EVENT_RETENTION_DAYS} days events are kept: reload your data, then read the feed again without a cursor.`,
  },
  sync_token_expired: {
    status: 410,
    title: 'Sync token expired',
    description: `A sync token older than the ${EVENT_RETENTION_DAYS} days changes are kept: start again with \`sync_token=*\` and replace what you keep with its answer.`,
  },
  payload_too_large: {
    status: 413,
    title: 'Payload too large',
    description: 'The request body is larger than the service accepts (BODY_LIMIT_BYTES).',
  },
  idempotency_key_reused: {
    status: 422,
    title: 'Idempotency key reused',
    description: 'This `Idempotency-Key` was already used with a different request; use a new key for a new request.',
  },
  unknown_student: {
    status: 422,
    title: 'Unknown student',
    description: 'A payment provider event names a student the service does not know.',
  },
  rate_limited: {
    status: 429,
    title: 'Too many requests',
    description:
      "The credential's or the address's rate limit is spent; wait for `Retry-After` (the `RateLimit` headers show the quota).",
  },
  password_attempts_exceeded: {
    status: 429,
    title: 'Too many password attempts',
    description:
      'Too many wrong passwords for one account in the window; no password is checked for it until `Retry-After` has passed.',
  },
  export_in_progress: {
    status: 429,
    title: 'Export in progress',
    description: 'An export of this account is already running (one at a time); retry after `Retry-After`.',
  },
  too_many_concurrent_replies: {
    status: 429,
    title: 'Too many concurrent replies',
    description:
      'The account (or conversation) already has as many AI replies queued or generating as it may; retry after `Retry-After`.',
  },
  too_many_streams: {
    status: 429,
    title: 'Too many open streams',
    description:
      'The account holds as many open streams as it may, whichever credential opened them; close one or retry after `Retry-After`.',
  },
  headers_too_large: {
    status: 431,
    title: 'Request headers too large',
    description:
      "The request's headers together are larger than 16 KiB; the connection is closed. Send fewer or shorter headers.",
  },
  internal_error: {
    status: 500,
    title: 'Internal error',
    description: 'A fault of the service, logged with the request id; quote `request_id` when you report it.',
  },
  service_unavailable: {
    status: 503,
    title: 'Service unavailable',
    description:
      'A dependency (the database, the rate-limit store) failed or was too slow, or concurrent writes collided; retry after `Retry-After`.',
  },
  not_configured: {
    status: 503,
    title: 'Not configured',
    description:
      "A feature its operator has not set up yet (the payment provider's secret); retry after `Retry-After`.",
  },
} as const satisfies Record<string, ProblemCodeEntry>;

export type ProblemCode = keyof typeof PROBLEM_CODES;
