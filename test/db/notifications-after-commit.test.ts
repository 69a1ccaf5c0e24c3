// The service's own connections announce their writes after the commit, not in it (db/notifications-after-commit.ts):
// the commit sends no NOTIFY (so it does not queue on PostgreSQL's server-wide notify lock), the process sends the
// messages once the transaction has committed, never for a rollback or a failed statement, and every other session
// notifies by its commit as before. PostgreSQL only: the embedded database has one writer, whose commits notify.
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import pg from 'pg';
import { connect, type Db } from '../../db/connect.ts';
import { NOTIFY_AFTER_COMMIT_OPTIONS } from '../../db/notifications-after-commit.ts';
import { notifyAfterCommit, notifyOnCommit } from '../../db/notifications.ts';
import { listeningTo, until } from '../support/next-notification.ts';
import { testNotifications } from '../support/partner-app.ts';
import { startTcpProxy } from '../support/tcp-proxy.ts';
import { testDatabase } from '../support/shared-database.ts';

describe('notifications sent after the commit', () => {
  let service: Db;
  const sendErrors: Error[] = [];

  before(function () {
    const { url } = testDatabase();
    if (!url) this.skip(); // PostgreSQL only (above)
    service = connect({ databaseUrl: url }, { notifyAfterCommit: { onError: (error) => sendErrors.push(error) } });
  });
  after(() => service?.destroy());
  afterEach(() => assert.deepEqual(sendErrors, []));

  const subscribe = async (channel: string) => (await listeningTo(testNotifications(), channel)).received;
  /** A message committed by another session after everything before: what arrived before it was sent before it. */
  const marker = (channel: string) =>
    testDatabase()
      .db.transaction()
      .execute((trx) => notifyOnCommit(trx, channel, 'marker'));

  /** A plain pg session with the service's start-up setting, and the notices it gets. */
  async function serviceSession() {
    const client = new pg.Client({ connectionString: testDatabase().url, options: NOTIFY_AFTER_COMMIT_OPTIONS });
    const notices: Array<{ detail?: string; hint?: string }> = [];
    client.on('notice', (notice) => notices.push(notice));
    await client.connect();
    return { client, notices };
  }

  it('leaves the NOTIFY out of the commit, and the process sends it once the transaction has committed', async () => {
    const received = await subscribe('test_after_commit');
    // A session with the setting but nobody sending for it: its commit announces nothing by itself...
    const { client, notices } = await serviceSession();
    try {
      await client.query('begin');
      await client.query(`select notify_after_commit('test_after_commit', 'left to the process')`);
      await client.query('commit');
    } finally {
      await client.end();
    }
    assert.deepEqual(
      notices.map(({ detail, hint }) => [detail, hint]),
      [['test_after_commit', 'left to the process']],
    );
    await marker('test_after_commit');
    await until(() => received.length > 0, 'the marker');
    assert.deepEqual(received, ['marker'], 'the commit itself sent nothing');
    // ...and the service's pool sends it after the commit.
    await service.transaction().execute((trx) => notifyAfterCommit(trx, 'test_after_commit', 'sent after'));
    await until(() => received.length > 1, 'the message sent after the commit');
    assert.deepEqual(received, ['marker', 'sent after']);
  });

  it('sends a statement in autocommit its message, and nothing for a rollback or a failed statement', async () => {
    const received = await subscribe('test_after_rollback');
    await service
      .transaction()
      .execute(async (trx) => {
        await notifyAfterCommit(trx, 'test_after_rollback', 'rolled back');
        throw new Error('roll back');
      })
      .catch(() => {});
    await assert.rejects(
      sql`do $$ begin perform notify_after_commit('test_after_rollback', 'failed'); raise exception 'fails'; end $$`.execute(
        service,
      ),
      /fails/,
    );
    await sql`select notify_after_commit('test_after_rollback', 'autocommit')`.execute(service);
    await until(() => received.length > 0, 'the statement in autocommit');
    await marker('test_after_rollback');
    await until(() => received.length > 1, 'the marker');
    assert.deepEqual(received, ['autocommit', 'marker']);
  });

  it("raises a trigger's notice once per transaction and channel, and any other session notifies by its commit", async () => {
    const table = sql.table('notify_after_commit_rows');
    const { client, notices } = await serviceSession();
    const received = await subscribe('test_trigger_rows');
    try {
      await client.query('create temporary table notify_after_commit_rows (n int)');
      await client.query(
        `create trigger rows_notify after insert on pg_temp.notify_after_commit_rows for each row execute function notify_channel('test_trigger_rows')`,
      );
      await client.query('begin');
      await client.query('insert into notify_after_commit_rows select generate_series(1, 3)');
      await client.query('insert into notify_after_commit_rows values (4)');
      await client.query('commit');
      assert.deepEqual(
        notices.map(({ detail }) => detail),
        ['test_trigger_rows'],
        'one notice for four rows in two statements',
      );
    } finally {
      await client.end();
    }
    // The same trigger function in a session without the setting (an operator's psql): the commit notifies.
    await testDatabase()
      .db.transaction()
      .execute(async (trx) => {
        await sql`create temporary table notify_after_commit_rows (n int) on commit drop`.execute(trx);
        await sql`create trigger rows_notify after insert on pg_temp.notify_after_commit_rows for each row execute function notify_channel('test_trigger_rows')`.execute(
          trx,
        );
        await sql`insert into ${table} values (1)`.execute(trx);
      });
    await until(() => received.length > 0, 'the notification of the commit');
    assert.deepEqual(received, ['']);
  });

  it('reports a send that fails with the database gone between the commit and the send, and sends again once it is back', async () => {
    const received = await subscribe('test_after_fault');
    const server = new URL(testDatabase().url!);
    const proxy = await startTcpProxy({ host: server.hostname, port: Number(server.port || 5432) });
    const failures: Error[] = [];
    // Its sends wait a second for more messages, so that the database is surely gone before the first one leaves.
    const behindProxy = connect(
      { databaseUrl: proxy.urlFor(testDatabase().url!) },
      { notifyAfterCommit: { onError: (error) => failures.push(error), coalesceMs: 1_000 } },
    );
    try {
      await behindProxy.transaction().execute((trx) => notifyAfterCommit(trx, 'test_after_fault', 'lost'));
      await proxy.stop(); // every connection reset, new ones refused
      await until(() => failures.length > 0, 'the failed send reported');
      await proxy.start();
      await behindProxy.transaction().execute((trx) => notifyAfterCommit(trx, 'test_after_fault', 'after'));
      await until(() => received.length > 0, 'the next send');
      assert.deepEqual(received, ['after']);
    } finally {
      await behindProxy.destroy();
      await proxy.close();
    }
  });
});
