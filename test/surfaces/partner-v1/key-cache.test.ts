// Partner keys are kept in each process (db/invalidated-cache.ts) and dropped everywhere when one is revoked:
// two apps with a notification path each stand for two processes. On PostgreSQL the listening connection is also
// cut, to show that a process that cannot hear revocations reads every key from the database instead.
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { pino } from 'pino';
import { PARTNER_KEYS_CHANNEL, revokeApiKey } from '../../../db/queries/api-keys.ts';
import { LISTENER_APPLICATION_NAME, notificationsFor, type Notifications } from '../../../db/notifications.ts';
import { contractClient } from '../../support/contract.ts';
import { buildApp, issueTestKey } from '../../support/partner-app.ts';
import { testDatabase } from '../../support/shared-database.ts';

describe('partner keys kept per process', () => {
  const opened: Notifications[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((n) => n.close()));
  });

  /** A second process's view: an app on a notification path of its own, once that path listens. */
  async function process() {
    const { db, url } = testDatabase();
    const notifications = notificationsFor(db, url, { logger: pino({ level: 'silent' }), timeoutMs: 5_000 });
    opened.push(notifications);
    const app = await buildApp({ notifications });
    const events = watch(notifications);
    await events.next('missed'); // the app's cache subscribed first, so it is listening too
    return { api: contractClient(app), events };
  }

  /** Resolves on the next event of a kind on the key channel; the app's own cache has seen it by then. */
  function watch(notifications: Notifications) {
    const waiting: Array<{ kind: string; resolve: () => void }> = [];
    const fire = (kind: string) => () => {
      for (const w of waiting.splice(0).filter((w) => w.kind === kind)) w.resolve();
    };
    notifications.subscribe(PARTNER_KEYS_CHANNEL, {
      message: fire('message'),
      missed: fire('missed'),
      lost: fire('lost'),
    });
    return {
      next: (kind: 'message' | 'missed' | 'lost') => new Promise<void>((resolve) => waiting.push({ kind, resolve })),
    };
  }

  it('refuses a revoked key in every process once the revocation commits', async () => {
    const [one, two] = [await process(), await process()];
    const { key, record } = await issueTestKey();
    for (const p of [one, two, one, two]) await p.api.get('/api/v1/health').set('X-Service-API-Key', key).expect(200);

    const delivered = Promise.all([one.events.next('message'), two.events.next('message')]);
    assert.equal(await revokeApiKey(testDatabase().db, record.prefix), true);
    await delivered;
    for (const p of [one, two]) {
      const res = await p.api.get('/api/v1/health').set('X-Service-API-Key', key).expect(401);
      assert.match(res.body.detail, /unknown or revoked/);
    }
  });

  it('serves kept keys while listening, and reads every key from the database once the listening connection is lost', async function () {
    const { db, url } = testDatabase();
    if (!url) this.skip(); // the embedded database listens in process: there is no connection to lose
    const listenersBefore = await listenerPids();
    const one = await process();
    const own = (await listenerPids()).filter((pid) => !listenersBefore.includes(pid));
    assert.equal(own.length, 1, 'one new listening connection');
    const { key, record } = await issueTestKey();
    await one.api.get('/api/v1/health').set('X-Service-API-Key', key).expect(200);

    // A change that notifies nobody is not seen while the key is kept: the answer came from the process.
    const revokeSilently = () =>
      db.updateTable('api_keys').set({ revoked_at: new Date() }).where('id', '=', record.id).execute();
    await revokeSilently();
    await one.api.get('/api/v1/health').set('X-Service-API-Key', key).expect(200);
    await db.updateTable('api_keys').set({ revoked_at: null }).where('id', '=', record.id).execute();

    const lost = one.events.next('lost');
    await sql`select pg_terminate_backend(${own[0]!})`.execute(db);
    await lost;
    await revokeSilently();
    await one.api.get('/api/v1/health').set('X-Service-API-Key', key).expect(401);
  });

  async function listenerPids(): Promise<number[]> {
    const { rows } = await sql<{
      pid: number;
    }>`select pid from pg_stat_activity where application_name = ${LISTENER_APPLICATION_NAME} and datname = current_database()`.execute(
      testDatabase().db,
    );
    return rows.map((row) => row.pid);
  }
});
