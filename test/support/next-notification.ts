// Waiting for the notification path (db/notifications.ts) in tests: caches subscribed before the test did, so once a
// test's subscriber has seen a message or `missed`, the app's caches on the same path have seen it too.
import type { Db } from '../../db/connect.ts';
import { notifyOnCommit, type Notifications } from '../../db/notifications.ts';
import { testNotifications } from './partner-app.ts';

/**
 * Resolves on the channel's next message (with its payload) or next `missed` (listening is in place). Subscribes at
 * once: call it before the change whose notification it waits for.
 */
export function nextNotification(
  channel: string,
  kind: 'message' | 'missed',
  notifications: Notifications = testNotifications(),
): Promise<string> {
  return new Promise((resolve) => {
    const stop = notifications.subscribe(channel, {
      message: (payload) => kind === 'message' && (stop(), resolve(payload)),
      missed: () => kind === 'missed' && (stop(), resolve('')),
    });
  });
}

/** Runs `change` and resolves once its notification on the channel has arrived (so every cache on the path has dropped what it moved). */
export async function changeNotified<T>(channel: string, change: () => Promise<T>): Promise<T> {
  const notified = nextNotification(channel, 'message');
  const result = await change();
  await notified;
  return result;
}

/**
 * Whether `change` sends anything on the channel: it runs, then a marker is sent in a transaction of its own, and
 * messages arrive in commit order, so the first to arrive is the change's if it sent one. Resolves once the marker
 * itself has arrived: a marker still on its way would drop the caches on the channel after the caller has gone on
 * (a read cached next would then be read again, as if a change had been notified).
 */
export async function notifies(db: Db, channel: string, change: () => Promise<unknown>): Promise<boolean> {
  const arrived: string[] = [];
  let markerArrived!: () => void;
  const marker = new Promise<void>((resolve) => (markerArrived = resolve));
  const stop = testNotifications().subscribe(channel, {
    message: (payload) => {
      arrived.push(payload);
      if (payload === MARKER) markerArrived();
    },
    missed: () => {},
  });
  try {
    await change();
    await db.transaction().execute((trx) => notifyOnCommit(trx, channel, MARKER));
    await marker;
  } finally {
    stop();
  }
  return arrived[0] !== MARKER;
}

const MARKER = 'test-marker';

/** Subscribes, and resolves once the channel's LISTEN is in place (the first `missed` says so), with what arrives. */
export async function listeningTo(notifications: Notifications, channel: string) {
  const received: string[] = [];
  let listening!: () => void;
  const ready = new Promise<void>((resolve) => (listening = resolve));
  const unsubscribe = notifications.subscribe(channel, {
    message: (payload) => received.push(payload),
    missed: () => listening(),
  });
  await ready;
  return { received, unsubscribe };
}

/** Resolves once `condition` holds, checking every 10 ms; fails past 5 s, naming `what`. */
export async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within 5 s`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
