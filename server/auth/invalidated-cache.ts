// What authentication reads on every request (a key's row, the account behind it), kept in process so that the hot
// path costs no database round trip, and dropped whenever a notification on its channel says that any of it changed
// (server/events/notifications.ts: sent by the changing transaction's commit, to every process). Revocation so takes
// effect in every process as soon as the commit's NOTIFY reaches it (well under a millisecond on one network).
//
// The cache trusts only what it read while it was listening: until the channel's LISTEN is in place, and from the
// moment the listening connection is lost until it is back, every read goes to the database (fail safe: slower,
// never stale). A read that overlaps a notification is answered but not kept, so a value read just before a
// revocation's commit cannot outlive it. Misses are never kept: a new key needs no notification.
import type { Notifications } from '../events/notifications.ts';

export interface InvalidatedCache<V> {
  /** The value of `key`: kept, or read by `load` (and kept when the cache may). */
  get(key: string, load: () => Promise<V | undefined>): Promise<V | undefined>;
  /** Whether kept values are being served now (false: listening is not in place, every read goes to `load`). */
  readonly serving: boolean;
}

export function invalidatedCache<V>(notifications: Notifications, channel: string, options: { maxEntries: number }): InvalidatedCache<V> {
  const entries = new Map<string, V>();
  let listening = false;
  // Bumped by every invalidation: a read that started under another generation may be stale.
  let generation = 0;
  const drop = () => {
    generation++;
    entries.clear();
  };
  notifications.subscribe(channel, {
    message: drop,
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
    async get(key, load) {
      if (listening) {
        const kept = entries.get(key);
        if (kept !== undefined) return kept;
      }
      const started = generation;
      const value = await load();
      if (value !== undefined && listening && started === generation) {
        // Oldest first out: a Map iterates in insertion order.
        if (entries.size >= options.maxEntries) entries.delete(entries.keys().next().value!);
        entries.set(key, value);
      }
      return value;
    },
  };
}
