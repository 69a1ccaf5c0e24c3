// The pull of the sync: the full state a page at a time, then what changed since a token, for the kinds the
// credential may read. A change is found in the changes feed (commit order, 30-day retention) and answered with the
// object as it is now, read in the same snapshot as the feed's page, with the mapper its REST operation uses: an
// object may come twice (changed again after the page's horizon), and a later answer then brings it once more, so
// applying the answers in order ends with the server's state.
import type { Db } from '../../db/connect.ts';
import { syncedExams, syncedTasks, type SyncSelection } from '../../db/queries/sync.ts';
import type { GeneralPrincipal } from '../../server/auth/principal.ts';
import { requireAnyScope } from '../../server/auth/scopes.ts';
import { EVENT_RETENTION_DAYS } from '../../domain/bounds.ts';
import { GoneError, InputError } from '../../domain/errors.ts';
import type { components } from '../../generated/general/types.ts';
import { FEED_TYPES, readFeed, type FeedType } from '../events/feed.ts';
import { READ_SCOPES } from '../events/read-scopes.ts';
import { examBodies } from '../exams/exam-body.ts';
import { taskBody } from '../tasks/task-body.ts';
import { fullSyncToken, notASyncToken, readSyncToken, SYNC_KINDS, type SyncKind } from './token.ts';

export type SyncPage = components['schemas']['SyncPage'];

interface KindReader {
  /** What its events' kinds begin with. */
  resource: 'task' | 'exam';
  bodies(db: Db, principal: GeneralPrincipal, selection: SyncSelection, now: Date): Promise<Array<{ id: string }>>;
}

const READERS: Record<SyncKind, KindReader> = {
  tasks: {
    resource: 'task',
    bodies: async (db, principal, selection) => (await syncedTasks(db, principal.user_id, selection)).map(taskBody),
  },
  exams: {
    resource: 'exam',
    bodies: async (db, principal, selection, now) =>
      examBodies(db, principal, await syncedExams(db, principal.user_id, selection), now),
  },
};

const scopeOf = (kind: SyncKind) => READ_SCOPES[READERS[kind].resource];
const isOf = (kind: SyncKind, type: string) => type.startsWith(`${READERS[kind].resource}.`);

export async function pullSync(
  db: Db,
  principal: GeneralPrincipal,
  request: { token: string | undefined; limit: number },
  now: Date,
): Promise<SyncPage> {
  // A credential that may read nothing the sync holds is told which scopes would do, rather than shown an empty state.
  requireAnyScope(principal, SYNC_KINDS.map(scopeOf));
  const kinds = SYNC_KINDS.filter((kind) => principal.scopes.includes(scopeOf(kind)));
  const position = readSyncToken(request.token);
  const types = FEED_TYPES.filter((type) => kinds.some((kind) => isOf(kind, type)));
  // One snapshot per answer: the feed's page (or a full sync's horizon) and the objects are read in it.
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (trx) => {
      if (!position.full) return changesSince(trx, principal, kinds, types, position.since, request.limit, now);
      // The feed's place at the first page's snapshot: what commits while the client pages comes after it.
      const since = position.since ?? (await readFeed(trx, principal, { types, limit: 0 }, now)).next_cursor;
      return fullPage(trx, principal, kinds, { ...position, since }, request.limit, now);
    });
}

async function fullPage(
  trx: Db,
  principal: GeneralPrincipal,
  kinds: readonly SyncKind[],
  position: { since: string; kind: SyncKind; afterId: string | undefined },
  limit: number,
  now: Date,
): Promise<SyncPage> {
  const answer = objectsOnly(true);
  let { afterId } = position;
  let left = limit;
  // A token names the kind it stopped in; kinds the credential lost since then are passed by.
  for (const kind of kinds.filter((k) => SYNC_KINDS.indexOf(k) >= SYNC_KINDS.indexOf(position.kind))) {
    const bodies = await READERS[kind].bodies(trx, principal, { afterId, limit: left + 1 }, now);
    const given = bodies.slice(0, left);
    (answer[kind] as Array<{ id: string }>).push(...given);
    if (bodies.length > left) {
      return {
        ...answer,
        has_more: true,
        sync_token: fullSyncToken(position.since, kind, given.at(-1)?.id ?? afterId),
      };
    }
    left -= given.length;
    afterId = undefined;
  }
  return { ...answer, has_more: false, sync_token: position.since };
}

async function changesSince(
  trx: Db,
  principal: GeneralPrincipal,
  kinds: readonly SyncKind[],
  types: readonly FeedType[],
  since: string,
  limit: number,
  now: Date,
): Promise<SyncPage> {
  const feed = await readFeed(trx, principal, { types, cursor: since, limit }, now).catch((error: unknown) => {
    if (error instanceof GoneError) {
      const detail = `This sync token is older than the ${EVENT_RETENTION_DAYS} days changes are kept, and changes may have gone since. Start again with sync_token=* and replace what you keep with its answer.`;
      throw new GoneError('sync_token_expired', detail);
    }
    throw error instanceof InputError ? notASyncToken() : error;
  });
  const answer = { ...objectsOnly(false), has_more: feed.has_more, sync_token: feed.next_cursor };
  for (const kind of kinds) {
    const named = feed.data.filter((event) => isOf(kind, event.type));
    const ids = [...new Set(named.map((event) => (event.data as { object: { id: string } }).object.id))];
    const bodies = await READERS[kind].bodies(trx, principal, { ids }, now);
    const found = new Set(bodies.map((body) => body.id));
    (answer[kind] as Array<{ id: string }>).push(...bodies);
    // Ids are never given again, so an object the events name that is no longer there was deleted.
    answer.deleted[kind] = ids.filter((id) => !found.has(id));
  }
  return answer;
}

/** An answer's objects, none yet; its token and has_more come when the page is read. */
function objectsOnly(full: boolean): Omit<SyncPage, 'has_more' | 'sync_token'> {
  return { full_sync: full, tasks: [], exams: [], deleted: { tasks: [], exams: [] } };
}
