// The pull of the sync: the full state a page at a time, then what changed since a token, for the kinds the
// credential may read. Tasks, decks, cards and exams are many: a full sync pages through them in id order, and a
// change is found in the changes feed (commit order, 30-day retention) and answered with the object as it is now,
// read in the same snapshot as the feed's page, with the mapper its REST operation uses: an object may come twice
// (changed again after the page's horizon), and a later answer then brings it once more, so applying the answers in
// order ends with the server's state. The rooms the student is in (at most 30) and the profile (one) are few and
// change without events (a room's timer and members, the profile's xp and streak), so every answer that ends a sync
// (has_more false) brings them whole; the pages before it, which a large account's full sync has many of, do not.
import type { Db } from '../../db/connect.ts';
import { listRecentWarnings } from '../../db/queries/warnings.ts';
import { findProfile } from '../../db/queries/profile.ts';
import { listMemberRooms } from '../../db/queries/rooms.ts';
import { syncedCards, syncedDecks, syncedExams, syncedTasks, type SyncSelection } from '../../db/queries/sync.ts';
import type { GeneralPrincipal, Scope } from '../../server/auth/principal.ts';
import { requireAnyScope } from '../../server/auth/scopes.ts';
import { feedCursor } from '../../server/contract/cursor.ts';
import { EVENT_RETENTION_DAYS } from '../../domain/bounds.ts';
import { GoneError, InputError } from '../../domain/errors.ts';
import type { components } from '../../generated/general/types.ts';
import { PROFILE_WARNINGS, profileBody } from '../accounts/profile-body.ts';
import { FEED_TYPES, horizonCursor, readFeed } from '../events/feed.ts';
import { READ_SCOPES } from '../events/read-scopes.ts';
import { examBodies } from '../exams/exam-body.ts';
import { cardBody, deckBody } from '../flashcards/card-body.ts';
import { roomBodies } from '../rooms/room-body.ts';
import { taskBody } from '../tasks/task-body.ts';
import { fullSyncToken, notASyncToken, readSyncToken, SYNC_KINDS, type SyncKind } from './token.ts';

export type SyncPage = components['schemas']['SyncPage'];
type AnswerKind = SyncPage['kinds'][number];

interface KindReader {
  /** What its events' kinds begin with. */
  resource: 'task' | 'deck' | 'card' | 'exam';
  bodies(db: Db, principal: GeneralPrincipal, selection: SyncSelection, now: Date): Promise<Array<{ id: string }>>;
}

const READERS: Record<SyncKind, KindReader> = {
  tasks: {
    resource: 'task',
    bodies: async (db, principal, selection) => (await syncedTasks(db, principal.user_id, selection)).map(taskBody),
  },
  decks: {
    resource: 'deck',
    bodies: async (db, principal, selection, now) =>
      (await syncedDecks(db, principal.user_id, selection, now)).map(deckBody),
  },
  cards: {
    resource: 'card',
    bodies: async (db, principal, selection) => (await syncedCards(db, principal.user_id, selection)).map(cardBody),
  },
  exams: {
    resource: 'exam',
    bodies: async (db, principal, selection, now) =>
      examBodies(db, principal, await syncedExams(db, principal.user_id, selection), now),
  },
};

/** The scope that lets a credential read each kind of the answer. */
const SCOPES: Record<AnswerKind, Scope> = {
  tasks: READ_SCOPES.task,
  decks: READ_SCOPES.deck,
  cards: READ_SCOPES.card,
  exams: READ_SCOPES.exam,
  rooms: 'rooms:read',
  profile: 'profile:read',
};
const ANSWER_KINDS = Object.keys(SCOPES) as AnswerKind[];
/** Any of them lets a credential pull. */
const ANY_SYNC_SCOPE = [...new Set(Object.values(SCOPES))];

const isOf = (kind: SyncKind, type: string) => type.startsWith(`${READERS[kind].resource}.`);
const mayRead = (principal: GeneralPrincipal, kind: AnswerKind) => principal.scopes.includes(SCOPES[kind]);

export async function pullSync(
  db: Db,
  principal: GeneralPrincipal,
  request: { token: string | undefined; limit: number },
  now: Date,
): Promise<SyncPage> {
  // A credential that may read nothing the sync holds is told which scopes would do, rather than shown an empty state.
  requireAnyScope(principal, ANY_SYNC_SCOPE);
  const kinds = ANSWER_KINDS.filter((kind) => mayRead(principal, kind));
  const paged = SYNC_KINDS.filter((kind) => mayRead(principal, kind));
  const position = readSyncToken(request.token);
  // A full sync paused past the retention would end with a token already expired: it is told at once instead.
  if (position.full && position.since !== undefined) checkAge(position.since, now);
  // A full sync's page within one kind, more following, is one statement (the kind's page), so one snapshot without
  // a transaction of its own: most pages of a large account's full sync (a task list's cost, not three statements
  // more). The others, and the answers of changes, read in one transaction.
  const single =
    position.full &&
    position.since !== undefined &&
    (await onePage(db, principal, paged, { ...position, since: position.since }, request.limit, now));
  if (single) return { ...single, kinds };
  // One snapshot per answer: the feed's page (or a full sync's horizon) and the objects are read in it.
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (trx) => {
      const page = position.full
        ? // The feed's place at the first page's snapshot: what commits while the client pages comes after it.
          await fullPage(
            trx,
            principal,
            paged,
            { ...position, since: position.since ?? (await syncTokenAt(trx, principal, now)) },
            request.limit,
            now,
          )
        : await changesSince(trx, principal, paged, position.since, request.limit, now);
      return { ...page, kinds, ...(page.has_more ? {} : await fewKinds(trx, principal, kinds, now)) };
    });
}

/**
 * The sync token of the present: the changes feed's place now, before which every change has committed. A list read
 * after it may hand it to a client (the `Sync-Token` header): what commits later comes in the answers to it.
 */
export async function syncTokenAt(db: Db, principal: GeneralPrincipal, now: Date): Promise<string> {
  return (await readFeed(db, principal, { types: [], limit: 0 }, now)).next_cursor;
}

/**
 * The sync token that matches a list read in one statement with the feed's horizon (db/queries/tasks.ts listTasks's
 * first page); an empty list read none, and the present then matches it as well.
 */
export async function listSyncToken(
  db: Db,
  principal: GeneralPrincipal,
  horizon: string | undefined,
  now: Date,
): Promise<string> {
  return horizon === undefined ? syncTokenAt(db, principal, now) : horizonCursor(horizon, now);
}

type ManyKinds = Omit<SyncPage, 'kinds' | 'rooms' | 'profile'>;

/**
 * The rooms and the profile, for an answer that ends a sync. A room's timer is shown as of `now` (a session past its
 * end shows finished); recording the finish, with its members' study and xp, is the worker's sweep's, within seconds.
 */
async function fewKinds(
  trx: Db,
  principal: GeneralPrincipal,
  kinds: readonly AnswerKind[],
  now: Date,
): Promise<Pick<SyncPage, 'rooms' | 'profile'>> {
  const answer: Pick<SyncPage, 'rooms' | 'profile'> = {};
  if (kinds.includes('rooms'))
    answer.rooms = await roomBodies(trx, principal.user_id, await listMemberRooms(trx, principal.user_id), now);
  const row = kinds.includes('profile') ? await findProfile(trx, principal.user_id) : undefined;
  if (row) answer.profile = profileBody(row, await listRecentWarnings(trx, principal.user_id, PROFILE_WARNINGS));
  return answer;
}

/** A full sync's page read in one statement when it lies within one kind and more follow; undefined otherwise. */
async function onePage(
  db: Db,
  principal: GeneralPrincipal,
  kinds: readonly SyncKind[],
  position: { since: string; kind: SyncKind; afterId: string | undefined },
  limit: number,
  now: Date,
): Promise<ManyKinds | undefined> {
  const kind = kinds.find((k) => SYNC_KINDS.indexOf(k) >= SYNC_KINDS.indexOf(position.kind));
  // An exam's body is read in several statements (its links and readiness).
  if (!kind || kind === 'exams') return undefined;
  const afterId = kind === position.kind ? position.afterId : undefined;
  const bodies = await READERS[kind].bodies(db, principal, { afterId, limit: limit + 1 }, now);
  if (bodies.length <= limit) return undefined;
  const answer = objectsOnly(true);
  const given = bodies.slice(0, limit);
  (answer[kind] as Array<{ id: string }>).push(...given);
  return { ...answer, has_more: true, sync_token: fullSyncToken(position.since, kind, given.at(-1)!.id) };
}

async function fullPage(
  trx: Db,
  principal: GeneralPrincipal,
  kinds: readonly SyncKind[],
  position: { since: string; kind: SyncKind; afterId: string | undefined },
  limit: number,
  now: Date,
): Promise<ManyKinds> {
  const answer = objectsOnly(true);
  // The last id given counts in the kind the token stopped in only.
  let afterId: string | undefined;
  let left = limit;
  // A token names the kind it stopped in; kinds the credential lost since then are passed by.
  for (const kind of kinds.filter((k) => SYNC_KINDS.indexOf(k) >= SYNC_KINDS.indexOf(position.kind))) {
    afterId = kind === position.kind ? position.afterId : undefined;
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
  }
  return { ...answer, has_more: false, sync_token: position.since };
}

async function changesSince(
  trx: Db,
  principal: GeneralPrincipal,
  kinds: readonly SyncKind[],
  since: string,
  limit: number,
  now: Date,
): Promise<ManyKinds> {
  const types = FEED_TYPES.filter((type) => kinds.some((kind) => isOf(kind, type)));
  const feed = await readFeed(trx, principal, { types, cursor: since, limit }, now).catch((error: unknown) => {
    if (error instanceof GoneError) throw tokenExpired();
    throw error instanceof InputError ? notASyncToken() : error;
  });
  const answer = { ...objectsOnly(false), has_more: feed.has_more, sync_token: feed.next_cursor };
  const named = (kind: SyncKind) =>
    feed.data
      .filter((event) => isOf(kind, event.type))
      .map((event) => (event.data as { object: { id: string; deck_id?: string } }).object);
  for (const kind of kinds) {
    const objects = named(kind);
    // A card's change moves its deck's counts: the deck comes again with it.
    if (kind === 'decks') objects.push(...named('cards').map((card) => ({ id: card.deck_id! })));
    const ids = [...new Set(objects.map((object) => object.id))];
    const bodies = await READERS[kind].bodies(trx, principal, { ids }, now);
    const found = new Set(bodies.map((body) => body.id));
    (answer[kind] as Array<{ id: string }>).push(...bodies);
    // Ids are never given again, so an object the events name that is no longer there was deleted.
    answer.deleted[kind] = ids.filter((id) => !found.has(id));
  }
  return answer;
}

/** The feed's place a full sync continues from, refused as the feed refuses a cursor past the retention. */
function checkAge(since: string, now: Date): void {
  let at: Date | undefined;
  try {
    at = feedCursor(since)?.at;
  } catch {
    throw notASyncToken();
  }
  if (!at) throw notASyncToken();
  if (at.getTime() < now.getTime() - EVENT_RETENTION_DAYS * 86_400_000) throw tokenExpired();
}

function tokenExpired() {
  const detail = `This sync token is older than the ${EVENT_RETENTION_DAYS} days changes are kept, and changes may have gone since. Start again with sync_token=* and replace what you keep with its answer.`;
  return new GoneError('sync_token_expired', detail);
}

/** An answer's objects, none yet; its token and has_more come when the page is read. */
function objectsOnly(full: boolean): Omit<ManyKinds, 'has_more' | 'sync_token'> {
  return {
    full_sync: full,
    tasks: [],
    decks: [],
    cards: [],
    exams: [],
    deleted: { tasks: [], decks: [], cards: [], exams: [] },
  };
}
