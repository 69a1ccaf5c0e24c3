// Waiting for the notification path (db/notifications.ts) in tests: caches subscribed before the test did, so once a
// test's subscriber has seen a message or `missed`, the app's caches on the same path have seen it too.
import type { Notifications } from '../../db/notifications.ts';
import { testNotifications } from './partner-app.ts';

/**
 * Resolves on the channel's next message (with its payload) or next `missed` (listening is in place). Subscribes at
 * once: call it before the change whose notification it waits for.
 */
export function nextNotification(channel: string, kind: 'message' | 'missed', notifications: Notifications = testNotifications()): Promise<string> {
  return new Promise((resolve) => {
    const stop = notifications.subscribe(channel, {
      message: (payload) => kind === 'message' && (stop(), resolve(payload)),
      missed: () => kind === 'missed' && (stop(), resolve('')),
    });
  });
}
