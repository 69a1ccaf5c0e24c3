// The notification path on the run's engine (PGlite in process, or PostgreSQL's LISTEN/NOTIFY on a connection of its
// own): a message is delivered when its transaction commits, never before and never after a rollback; subscribers
// get their channel's messages only, and stop getting them once unsubscribed.
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { notificationsFor, notifyOnCommit, type Notifications } from '../../../db/notifications.ts';
import { listeningTo, until } from '../../support/next-notification.ts';
import { testDatabase } from '../../support/shared-database.ts';

describe('notifications', () => {
  let notifications: Notifications;
  before(() => {
    const { db, url } = testDatabase();
    notifications = notificationsFor(db, url, { logger: pino({ level: 'silent' }), timeoutMs: 5_000 });
  });
  after(() => notifications.close());

  const subscribe = (channel: string) => listeningTo(notifications, channel);

  it('delivers a message when its transaction commits, not before', async () => {
    const { received } = await subscribe('test_commit');
    const { db } = testDatabase();
    await db.transaction().execute(async (trx) => {
      await notifyOnCommit(trx, 'test_commit', 'first');
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.deepEqual(received, [], 'nothing before the commit');
    });
    await until(() => received.length === 1, 'the message after the commit');
    assert.deepEqual(received, ['first']);
  });

  it('delivers nothing for a rolled-back transaction, and only its own channel to a subscriber', async () => {
    const { received } = await subscribe('test_rollback');
    const other = await subscribe('test_other');
    const { db } = testDatabase();
    await db
      .transaction()
      .execute(async (trx) => {
        await notifyOnCommit(trx, 'test_rollback', 'rolled back');
        throw new Error('roll back');
      })
      .catch(() => {});
    // Messages arrive in commit order: once the later one is here, the rolled-back one would have been too.
    await db.transaction().execute((trx) => notifyOnCommit(trx, 'test_rollback', 'committed'));
    await until(() => received.length > 0, 'the committed message');
    assert.deepEqual(received, ['committed']);
    assert.deepEqual(other.received, []);
  });

  it('stops delivering to a subscriber that unsubscribed', async () => {
    const staying = await subscribe('test_unsubscribe');
    // A second subscriber of a channel already listened to is served at once (no `missed`: it missed nothing).
    const gone: string[] = [];
    notifications.subscribe('test_unsubscribe', { message: (payload) => gone.push(payload), missed: () => {} })();
    await testDatabase()
      .db.transaction()
      .execute((trx) => notifyOnCommit(trx, 'test_unsubscribe', 'after'));
    await until(() => staying.received.length > 0, 'the message to the subscriber that stays');
    assert.deepEqual(gone, []);
  });

  it('refuses a channel name that is not a plain identifier', () => {
    assert.throws(
      () => notifications.subscribe('Bad-Channel', { message: () => {}, missed: () => {} }),
      /not a notification channel name/,
    );
  });
});
