// What authentication reads on every request (a key's row, the account behind it), kept in process so that the hot
// path costs no database round trip, and dropped whenever a notification on its channel says that any of it changed
// (db/notifications.ts: sent by the changing transaction's commit, to every process). Revocation so takes
// effect in every process as soon as the commit's NOTIFY reaches it (well under a millisecond on one network).
//
// The cache trusts only what it read while it was listening: until the channel's LISTEN is in place, and from the
// moment the listening connection is lost until it is back, every read goes to the database (fail safe: slower,
// never stale). A read that overlaps a notification is answered but not kept, so a value read just before a
// revocation's commit cannot outlive it. Misses are never kept: a new key needs no notification.
//
// A message drops everything kept, unless the cache knows whose each value is (`ownerOf`) and the message names an
// owner (its payload): then only that owner's values go, so that one student's change does not empty every process.
import type { Notifications } from './notifications.ts';

export interface InvalidatedCache<V> {
  /**
   * The value of `key`: kept, or read by `load` (and kept when the cache may). A kept value that `usable` refuses (one
   * that has aged, say) is read again and replaced.
   */
  get(key: string, load: () => Promise<V | undefined>, usable?: (kept: V) => boolean): Promise<V | undefined>;
  /** Whether kept values are being served now (false: listening is not in place, every read goes to `load`). */
  readonly serving: boolean;
  /** Drops `owner`'s values now (everything without `ownerOf`): a change this process committed, ahead of its NOTIFY. */
  dropOwner(owner: string): void;
}

export interface CacheOptions<V> {
  maxEntries: number;
  /**
   * How long a value is kept at most: for a channel whose messages a dying process can lose (sent after the commit,
   * db/notifications-after-commit.ts), the longest such a loss leaves it stale. Unbounded when absent.
   */
  maxAgeMs?: number;
  /** Whose a value is: a message whose payload names an owner drops that owner's values only (else all). */
  ownerOf?: (value: V) => string;
}

export function invalidatedCache<V>(
  notifications: Notifications,
  channel: string,
  options: CacheOptions<V>,
): InvalidatedCache<V> {
  const entries = new Map<string, { value: V; keptUntil: number }>();
  // The keys kept per owner, when values have owners: what a message naming that owner drops.
  const keysByOwner = new Map<string, Set<string>>();
  let listening = false;
  // Bumped by every invalidation: a read that started under another generation may be stale.
  let generation = 0;
  const drop = () => {
    generation++;
    entries.clear();
    keysByOwner.clear();
  };
  const forget = (key: string) => {
    const value = entries.get(key)?.value;
    if (value === undefined) return;
    entries.delete(key);
    const owner = options.ownerOf?.(value);
    const keys = owner === undefined ? undefined : keysByOwner.get(owner);
    keys?.delete(key);
    if (keys?.size === 0) keysByOwner.delete(owner!);
  };
  const dropOwner = (owner: string) => {
    generation++;
    for (const key of keysByOwner.get(owner) ?? []) entries.delete(key);
    keysByOwner.delete(owner);
  };
  notifications.subscribe(channel, {
    message: (payload) => (options.ownerOf && payload ? dropOwner(payload) : drop()),
    missed: () => {
      drop();
      listening = true;
    },
    lost: () => {
      listening = false;
      drop();
    },
  });

  return {
    get serving() {
      return listening;
    },
    dropOwner: (owner) => (options.ownerOf ? dropOwner(owner) : drop()),
    async get(key, load, usable) {
      if (listening) {
        const kept = entries.get(key);
        if (kept !== undefined && performance.now() < kept.keptUntil && (!usable || usable(kept.value)))
          return kept.value;
      }
      const started = generation;
      const value = await load();
      if (value !== undefined && listening && started === generation) {
        // Oldest first out: a Map iterates in insertion order.
        if (entries.size >= options.maxEntries) forget(entries.keys().next().value!);
        forget(key);
        entries.set(key, { value, keptUntil: performance.now() + (options.maxAgeMs ?? Infinity) });
        const owner = options.ownerOf?.(value);
        if (owner !== undefined) keysByOwner.set(owner, (keysByOwner.get(owner) ?? new Set()).add(key));
      }
      return value;
    },
  };
}
