// The bounds of what one account may hold, in one place: the services check them, the problem catalogue
// (server/http/problem-codes.ts, and so docs/errors.md) states them, and a test holds the spec's text and
// docs/limits.md to them (test/house/bounds.test.ts). Each is small enough that what it bounds is one small read.

/** Rooms one student owns at most (409 room_limit_reached). */
export const MAX_ROOMS_OWNED = 10;
/** Rooms one student is a member of at most, their own included (409 room_join_limit_reached). */
export const MAX_ROOMS_JOINED = 30;
/** Members one room has at most, its owner included (409 room_full): a focus session's finish credits this many. */
export const MAX_ROOM_MEMBERS = 30;

/** Feeds per student: one per calendar app or device, few enough that a leaked list is short to revoke. */
export const MAX_FEEDS_PER_STUDENT = 5;

/**
 * Open recurring series a student may have (spec: createTask). Each is projected in every week view and costs its
 * walk there; a student's courses and habits fit in a fraction of it (a dozen courses with three recurring tasks each).
 */
export const MAX_OPEN_SERIES = 50;

/** Endpoints per student: enough for a few integrations, few enough that one change fans out to a handful. */
export const MAX_ENDPOINTS_PER_STUDENT = 10;

/** How long events are kept, and how long a feed cursor stays good: the documented period. */
export const EVENT_RETENTION_DAYS = 30;

/**
 * Streams one account may hold open at once, of every kind together (the readiness and room streams): a student's
 * phone, tablet and laptop with a few tabs each (a browser keeps at most six HTTP/1.1 connections per site, so one
 * browser cannot hold more than six). Slack allows an app ten Socket Mode connections at once; one account here is
 * one person.
 */
export const MAX_OPEN_STREAMS = 10;

/** Exports one student may run at once, in every process: after GitHub, which builds one archive of an account at a time. */
export const EXPORTS_AT_ONCE = 1;

/**
 * AI replies one account may have queued or generating at once, by plan (one per conversation). A student reads one
 * reply at a time; 2 leaves room for a second tab. Contract accounts, whose institution pays for priority, get one
 * more, and still fewer than the 4 generation slots of a default process, so that no single account can hold them all.
 */
export const REPLIES_IN_FLIGHT: Readonly<Record<'free' | 'plus' | 'contract', number>> = {
  free: 2,
  plus: 2,
  contract: 3,
};

/**
 * How long a held resource's lease (services/leases/) outlives its holder's last renewal: what a process that dies
 * leaves behind, at most. Its holder renews every third of it, so a slow renewal or two does not lose it.
 */
export const LEASE_TTL_MS = 45_000;
