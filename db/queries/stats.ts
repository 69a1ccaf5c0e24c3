import { sql } from 'kysely';
import { invalidatedCache, type InvalidatedCache } from '../invalidated-cache.ts';
import type { Db } from '../connect.ts';
import type { Notifications } from '../notifications.ts';
import { KEPT_WITHOUT_NOTIFICATION_MS } from '../notifications-after-commit.ts';
import { executePrepared } from '../prepared-statements.ts';

/** Notified after the commit of any change /stats counts (a row appended to a delta table, db/migrations/20261126_0002_stats_changes.ts, and db/notifications-after-commit.ts). */
export const STATS_CHANNEL = 'stats';

type CountedTable = 'users' | 'universities' | 'flashcard_decks' | 'ai_messages' | 'study_rooms';

/**
 * Past this many delta rows a read folds them into one per table (or per hour). Below it, a read only sums (and
 * writes nothing, so polling partners cost no commit); above it, the rows appended since the last fold stay a few
 * dozen to sum.
 */
export const FOLD_ABOVE = 64;

const HOUR_MS = 3_600_000;

export interface ServiceStats {
  total_users: number;
  active_users_30d: number;
  universities_count: number;
  flashcard_decks: number;
  ai_messages_total: number;
  study_rooms_total: number;
}

/** The counts as read, with the windows they stay right for. */
export interface ReadStats {
  counts: ServiceStats;
  /** The window's start they were read with: an earlier one could count more students. */
  activeSince: number;
  /** The earliest last activity within the window: a window starting after it counts that student no more. */
  earliestActive: number;
}

const keptStats = new WeakMap<Db, InvalidatedCache<ReadStats>>();

/**
 * The counts of /stats, students active since `activeSince` among them. Served from memory once keepStatsInMemory was
 * called for `db`, until a change is notified or the window leaves a counted student behind; read otherwise.
 */
export async function getServiceStats(db: Db, activeSince: Date): Promise<ServiceStats> {
  const kept = keptStats.get(db);
  if (!kept) return (await readServiceStats(db, activeSince)).counts;
  const since = activeSince.getTime();
  const stats = await kept.get(
    'stats',
    () => readServiceStats(db, activeSince),
    (read) => read.activeSince <= since && since <= read.earliestActive,
  );
  return stats!.counts;
}

/**
 * The longest /api/v1/stats is kept without a notification: its changes are told after their commits, which a dying
 * process can fail to send (docs/features.md states it; test/house/staleness.test.ts holds the text to it).
 */
export const STATS_KEPT_AT_MOST_MS = KEPT_WITHOUT_NOTIFICATION_MS;

/** Serves getServiceStats of `db` from memory from now on, by the cache's rules (db/invalidated-cache.ts). */
export function keepStatsInMemory(db: Db, notifications: Notifications): void {
  keptStats.set(db, invalidatedCache(notifications, STATS_CHANNEL, { maxEntries: 1, maxAgeMs: STATS_KEPT_AT_MOST_MS }));
}

/**
 * All counts of /stats in one statement, so they are one snapshot. The five totals are sums of the delta rows the
 * counted tables' triggers append (db/migrations/20261124_0007_stats_counters.ts). `active_users_30d` sums the
 * students per hour of last activity (db/migrations/20261125_0401_activity_hours.ts) over the window's whole hours,
 * and counts on users_last_active_idx only the students of its first, partial hour. When the rows have piled up the
 * same statement folds them: it deletes the rows it can lock (SKIP LOCKED: a concurrent fold keeps the rows it took,
 * and neither waits) and appends their sums. The sums it answers are read from the statement's snapshot, which holds
 * the rows as they were before the fold, once each.
 */
export async function readServiceStats(db: Db, activeSince: Date): Promise<ReadStats> {
  // The first whole hour of the window (hours are cut from 2000-01-01T00:00Z, as the triggers cut them).
  const wholeHoursFrom = new Date(Math.floor(activeSince.getTime() / HOUR_MS) * HOUR_MS + HOUR_MS);
  // A named prepared statement (db/prepared-statements.ts): partners poll it, and its plan is not small.
  const rows = await executePrepared(
    db,
    sql<{ counter: CountedTable | 'active_users_30d' | 'earliest_active_ms'; n: number | null }>`
    with folded as (
      delete from stat_counter_deltas
      where (select count(*) from stat_counter_deltas) > ${FOLD_ABOVE}
        and ctid = any (array(select ctid from stat_counter_deltas for update skip locked))
      returning counter, delta
    ), refolded as (
      insert into stat_counter_deltas (counter, delta) select counter, sum(delta) from folded group by counter
    ), hours_folded as (
      -- Judged on the window's rows (an index range), folding every hour: rows of hours the window has left are
      -- never summed again, but students who come back append -1 rows to them.
      delete from activity_hour_deltas
      where (select count(*) - count(distinct hour) from activity_hour_deltas where hour >= ${wholeHoursFrom}) > ${FOLD_ABOVE}
        and ctid = any (array(select ctid from activity_hour_deltas for update skip locked))
      returning hour, delta
    ), hours_refolded as (
      insert into activity_hour_deltas (hour, delta) select hour, sum(delta) from hours_folded group by hour having sum(delta) <> 0
    )
    select counter, sum(delta)::int8 as n from stat_counter_deltas group by counter
    union all
    select 'active_users_30d', (
      (select coalesce(sum(delta), 0) from activity_hour_deltas where hour >= ${wholeHoursFrom})
      + (select count(*) from users where last_active_at >= ${activeSince} and last_active_at < ${wholeHoursFrom})
    )::int8
    union all
    -- The first entry of users_last_active_idx in the window, in whole milliseconds (floor: never past the instant).
    select 'earliest_active_ms', floor(extract(epoch from (select min(last_active_at) from users where last_active_at >= ${activeSince})) * 1000)::int8
  `,
  );
  const count = (counter: CountedTable | 'active_users_30d') => rows.find((r) => r.counter === counter)?.n ?? 0;
  const earliestActive = rows.find((r) => r.counter === 'earliest_active_ms')?.n;
  return {
    counts: {
      total_users: count('users'),
      active_users_30d: count('active_users_30d'),
      universities_count: count('universities'),
      flashcard_decks: count('flashcard_decks'),
      ai_messages_total: count('ai_messages'),
      study_rooms_total: count('study_rooms'),
    },
    activeSince: activeSince.getTime(),
    earliestActive: earliestActive ?? Infinity,
  };
}
