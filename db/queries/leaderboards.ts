import { sql } from 'kysely';
import { invalidatedCache, type InvalidatedCache } from '../invalidated-cache.ts';
import type { Db } from '../connect.ts';
import type { Notifications } from '../notifications.ts';
import { KEPT_WITHOUT_NOTIFICATION_MS } from '../notifications-after-commit.ts';
import { executePrepared } from '../prepared-statements.ts';
import { currentStreak } from './streak.ts';

/** Notified after the commit of any change that could move a board (triggers on users, db/migrations/20261126_0001_leaderboard_changes.ts, and db/notifications-after-commit.ts). */
export const LEADERBOARDS_CHANNEL = 'leaderboards';

export interface LeaderboardOptions {
  /** Users without activity since then keep their place but lose their names. */
  activeSince: Date;
  limit: number;
  universityId?: string;
}

export interface LeaderboardEntry {
  rank: number;
  nickname: string | null;
  first_name: string | null;
  xp: number;
  streak: number;
}

/**
 * A board as read, with how long it stays what the query would give: boards change with the data (a notification
 * drops them) and with the clock, which hides the names of students whose last activity leaves the window and lapses
 * streaks at the students' local midnight.
 */
export interface Leaderboard {
  /** Frozen, so that its JSON and ETag are made once (server/http/frozen-json.ts). */
  entries: readonly LeaderboardEntry[];
  /** The window's start it was read with: an earlier one could name students it hides. */
  activeSince: number;
  /** The earliest last activity among the named: a window starting after it hides that name. */
  namedSince: number;
  /** When the first streak it shows lapses (PostgreSQL's clock). */
  streaksUntil: number;
}

const keptBoards = new WeakMap<Db, InvalidatedCache<Leaderboard>>();
/** Boards per process: the global one and each university's, per page size partners ask for. */
const KEPT_BOARDS = 200;

/**
 * The top users by xp with competition ranks (equal xp, equal rank). Users without activity since
 * `activeSince` keep their place but lose their names: anonymity is applied here, so no name leaves the database.
 * Served from memory once keepLeaderboardsInMemory was called for `db`, until a change or the clock moves the board.
 */
export async function topUsersByXp(db: Db, options: LeaderboardOptions): Promise<readonly LeaderboardEntry[]> {
  const kept = keptBoards.get(db);
  if (!kept) return (await readLeaderboard(db, options)).entries;
  const activeSince = options.activeSince.getTime();
  const board = await kept.get(
    `${options.universityId ?? ''}/${options.limit}`,
    () => readLeaderboard(db, options),
    (board) => board.activeSince <= activeSince && activeSince <= board.namedSince && Date.now() < board.streaksUntil,
  );
  return board!.entries;
}

/**
 * The longest a board is kept without a notification: its changes are told after their commits, which a dying process
 * can fail to send (docs/features.md states it; test/house/staleness.test.ts holds the text to it).
 */
export const BOARDS_KEPT_AT_MOST_MS = KEPT_WITHOUT_NOTIFICATION_MS;

/** Serves topUsersByXp of `db` from memory from now on, by the cache's rules (db/invalidated-cache.ts). */
export function keepLeaderboardsInMemory(db: Db, notifications: Notifications): void {
  keptBoards.set(
    db,
    invalidatedCache(notifications, LEADERBOARDS_CHANNEL, {
      maxEntries: KEPT_BOARDS,
      maxAgeMs: BOARDS_KEPT_AT_MOST_MS,
    }),
  );
}

/** The board as the database gives it now, with how long it stays so (what topUsersByXp keeps). */
export async function readLeaderboard(db: Db, options: LeaderboardOptions): Promise<Leaderboard> {
  let query = db.selectFrom('users').select((eb) => [
    // rank() counts the rows before this one with more xp; they all come first in (xp desc, id) order, so the rank
    // computed over the first `limit` rows is the rank over all of them.
    sql<number>`rank() over (order by ${eb.ref('xp')} desc)`.as('rank'),
    eb
      .case()
      .when('last_active_at', '>=', options.activeSince)
      .then(eb.ref('nickname'))
      .else(null)
      .end()
      .as('nickname'),
    eb
      .case()
      .when('last_active_at', '>=', options.activeSince)
      .then(eb.ref('first_name'))
      .else(null)
      .end()
      .as('first_name'),
    'xp',
    currentStreak.as('streak'),
    eb
      .case()
      .when('last_active_at', '>=', options.activeSince)
      .then(eb.ref('last_active_at'))
      .else(null)
      .end()
      .as('named_since'),
    // A shown streak lapses when the student's local date passes the day after the last study day.
    sql<Date | null>`case when streak <> 0 and last_study_date >= (now() at time zone time_zone)::date - 1
        then (last_study_date + 2)::timestamp at time zone time_zone end`.as('streak_until'),
  ]);
  if (options.universityId) query = query.where('university_id', '=', options.universityId);
  // One level, ordered and limited where the window runs: PostgreSQL reads users_xp_idx (or users_university_xp_idx)
  // in order and stops after `limit` rows. With the window in a subquery and the limit outside it, the planner ranked
  // every user first (a sequential scan and a sort of the whole table; test/scale/query-plans.scale.ts).
  // A named prepared statement (db/prepared-statements.ts): partners poll the same few pages.
  const rows = await executePrepared(db, query.orderBy('xp', 'desc').orderBy('id').limit(options.limit));
  let namedSince = Infinity;
  let streaksUntil = Infinity;
  const entries = rows.map(({ named_since, streak_until, ...entry }) => {
    if (named_since) namedSince = Math.min(namedSince, named_since.getTime());
    if (streak_until) streaksUntil = Math.min(streaksUntil, streak_until.getTime());
    return Object.freeze(entry);
  });
  return { entries: Object.freeze(entries), activeSince: options.activeSince.getTime(), namedSince, streaksUntil };
}
