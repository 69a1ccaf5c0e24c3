// Sync tokens. Past a full sync, a token is the changes feed's cursor itself (services/events/feed.ts checks its age
// and its place). While a full sync pages, it is that cursor, taken in the first page's snapshot, with where the
// paging stands: the kind being read and the last id given.
import { encodeCursor } from '../../server/contract/cursor.ts';
import { InputError } from '../../domain/errors.ts';

/** The kinds a full sync pages through, in this order, each by id. */
export const SYNC_KINDS = ['tasks', 'decks', 'cards', 'exams'] as const;
export type SyncKind = (typeof SYNC_KINDS)[number];

const FULL = 'full';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export type SyncPosition =
  | { full: true; since: string | undefined; kind: SyncKind; afterId: string | undefined }
  | { full: false; since: string };

export function readSyncToken(token: string | undefined): SyncPosition {
  if (token === undefined || token === '*')
    return { full: true, since: undefined, kind: SYNC_KINDS[0], afterId: undefined };
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw notASyncToken();
  }
  if (!Array.isArray(key) || key[0] !== FULL) return { full: false, since: token };
  const [, since, kind, afterId] = key as unknown[];
  if (
    key.length !== 4 ||
    typeof since !== 'string' ||
    !SYNC_KINDS.includes(kind as SyncKind) ||
    typeof afterId !== 'string' ||
    (afterId !== '' && !UUID.test(afterId))
  )
    throw notASyncToken();
  return { full: true, since, kind: kind as SyncKind, afterId: afterId || undefined };
}

/** The token of a full sync's next page. */
export function fullSyncToken(since: string, kind: SyncKind, afterId: string | undefined): string {
  return encodeCursor([FULL, since, kind, afterId ?? '']);
}

/** The 400 of a token the sync could not have issued. */
export function notASyncToken() {
  return new InputError([{ path: 'query.sync_token', message: 'is not a token this sync issued' }]);
}
