// A kept value's age bound (db/invalidated-cache.ts, maxAgeMs): on a channel whose messages a dying process can lose
// (sent after the commit, db/notifications-after-commit.ts), a value is read again once it is that old.
import assert from 'node:assert/strict';
import { invalidatedCache } from '../../db/invalidated-cache.ts';
import { nextNotification } from '../support/next-notification.ts';
import { testNotifications } from '../support/partner-app.ts';

describe('a kept value with an age bound', () => {
  /** A cache on its own channel, serving once its LISTEN is in place; its reads count up from 1. */
  async function cacheOf(channel: string, maxAgeMs?: number) {
    const cache = invalidatedCache<number>(testNotifications(), channel, { maxEntries: 1, maxAgeMs });
    await nextNotification(channel, 'missed');
    let reads = 0;
    return { get: () => cache.get('key', async () => ++reads) };
  }

  it('is read again once it is older than the bound, and kept until then', async () => {
    const bounded = await cacheOf('test_cache_bounded', 200);
    const unbounded = await cacheOf('test_cache_unbounded');
    for (const cache of [bounded, unbounded]) {
      assert.equal(await cache.get(), 1);
      assert.equal(await cache.get(), 1, 'kept');
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
    assert.equal(await bounded.get(), 2, 'read again past its age');
    assert.equal(await bounded.get(), 2, 'and kept again');
    assert.equal(await unbounded.get(), 1, 'no bound: kept until a message drops it');
  });
});
