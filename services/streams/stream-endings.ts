// How a live stream of the general surface ends: the `error` event's code and the words telling the client whether
// and how to reconnect, the same for every kind of stream, and what a revocation of its place ends it with.
import type { StreamRevocation } from './open-streams.ts';

/** What EventSource waits before it reconnects, sent as a stream's `retry:`. */
export const RECONNECT_MS = 2_000;

export const STREAM_ENDINGS = {
  service_restarting: 'The service is restarting. Reconnect with Last-Event-ID; the moves made meanwhile follow.',
  max_duration_reached:
    'The stream was open as long as one stream may be. Reconnect with Last-Event-ID; nothing is missed.',
  service_unavailable: 'The database did not answer. Reconnect with Last-Event-ID in a moment.',
  account_deleted: 'The account was deleted. Do not reconnect.',
  credential_revoked:
    'The access token or API key this stream was opened with was revoked (signed out, access withdrawn, key revoked, password changed). Reconnect only with a valid credential.',
} as const;

export type StreamEnding = keyof typeof STREAM_ENDINGS;

export const REVOCATION_ENDINGS: Record<StreamRevocation, StreamEnding> = {
  account_deleted: 'account_deleted',
  credential_revoked: 'credential_revoked',
  // Its place was not renewed in time (the database was unreachable): like a database failure, reconnect.
  lease_lost: 'service_unavailable',
};
