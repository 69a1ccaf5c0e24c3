// General principals (an access token's grant and account, a personal key and its account) are kept per process
// (server/auth/authenticate-general.ts) and dropped in every process when a change to them commits. Two apps, each with
// a notification path of its own, stand for two processes; on PostgreSQL the second also has a connection pool of its
// own, so that nothing but the commit's NOTIFY can tell it about a change made through the first.
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { pino } from 'pino';
import { connect, type Db } from '../../../db/connect.ts';
import { PRINCIPALS_CHANNEL } from '../../../db/queries/principal-changes.ts';
import { setPlan } from '../../../db/queries/users.ts';
import { LISTENER_APPLICATION_NAME, notificationsFor, type Notifications } from '../../../db/notifications.ts';
import { contractClient } from '../../support/contract.ts';
import { newStudent } from '../../support/general-app.ts';
import { registerTestClient, signIn } from '../../support/oauth-flow.ts';
import { buildApp } from '../../support/partner-app.ts';
import { testDatabase } from '../../support/shared-database.ts';

describe('general principals kept per process', () => {
  const opened: Notifications[] = [];
  const pools: Db[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((n) => n.close()));
    await Promise.all(pools.splice(0).map((db) => db.destroy()));
  });

  /** A process's view: an app on a notification path (and, on PostgreSQL, a pool) of its own, once that path listens. */
  async function process(options: { ownPool: boolean }) {
    const { url } = testDatabase();
    const db = options.ownPool && url ? connect({ databaseUrl: url }) : testDatabase().db;
    if (db !== testDatabase().db) pools.push(db);
    const notifications = notificationsFor(db, url, { logger: pino({ level: 'silent' }), timeoutMs: 5_000 });
    opened.push(notifications);
    const app = await buildApp({ db, notifications });
    const events = watch(notifications);
    await events.next('missed'); // the app's caches subscribed first, so they are listening too
    return { app, api: contractClient(app), db, events };
  }
  const twoProcesses = async () => [await process({ ownPool: false }), await process({ ownPool: true })] as const;

  /** Resolves on the next message on the principals channel; the app's own caches have seen it by then. */
  function watch(notifications: Notifications) {
    const waiting: Array<{ kind: string; resolve: () => void }> = [];
    const fire = (kind: string) => () => {
      for (const w of waiting.splice(0).filter((w) => w.kind === kind)) w.resolve();
    };
    notifications.subscribe(PRINCIPALS_CHANNEL, {
      message: fire('message'),
      missed: fire('missed'),
      lost: fire('lost'),
    });
    return {
      next: (kind: 'message' | 'missed' | 'lost') => new Promise<void>((resolve) => waiting.push({ kind, resolve })),
    };
  }
  const delivered = (...processes: Array<{ events: ReturnType<typeof watch> }>) =>
    Promise.all(processes.map((p) => p.events.next('message')));
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  it('refuses the tokens of a grant revoked through one process in every process', async () => {
    const [one, two] = await twoProcesses();
    const student = await newStudent(one.app);
    const appClient = (await registerTestClient(['tasks:read'])).client_id;
    const appTokens = await signIn(one.app, {
      email: student.email,
      password: student.password,
      client_id: appClient,
      scope: 'tasks:read',
    });
    for (const p of [one, two, one, two]) await p.api.get('/api/tasks').set(bearer(appTokens.access_token)).expect(200);

    const told = delivered(one, two);
    await one.api.delete(`/api/users/me/authorizations/${appClient}`).set(student.headers).expect(204);
    await told;
    for (const p of [one, two]) {
      await p.api.get('/api/tasks').set(bearer(appTokens.access_token)).expect(401);
      await p.api.get('/api/tasks').set(student.headers).expect(200); // the student's own sign-in is another grant
    }
  });

  it('applies a new plan in every process from the next request on', async () => {
    const [one, two] = await twoProcesses();
    const student = await newStudent(one.app);
    const minuteQuota = async (p: typeof one) =>
      /"minute"; q=(\d+);/.exec(
        String((await p.api.get('/api/tasks').set(student.headers).expect(200)).headers['ratelimit-policy']),
      )?.[1];
    for (const p of [one, two]) assert.equal(await minuteQuota(p), '60');

    // As the CLI's `users plan` or a payment does it: from outside both apps.
    const told = delivered(one, two);
    await setPlan(
      testDatabase().db,
      student.id,
      { plan: 'contract', contract_per_minute: 5000, contract_per_day: 500_000, contract_ai_per_hour: 900 },
      new Date(),
    );
    await told;
    for (const p of [one, two]) assert.equal(await minuteQuota(p), '5000');
  });

  it('refuses a personal key revoked through one process in every process', async () => {
    const [one, two] = await twoProcesses();
    const student = await newStudent(one.app);
    const created = (
      await two.api
        .post('/api/users/me/api-keys')
        .set(student.headers)
        .send({ name: 'script', scopes: ['tasks:read'] })
        .expect(201)
    ).body;
    const viaKey = { 'x-service-api-key': created.key };
    for (const p of [one, two, one, two]) await p.api.get('/api/tasks').set(viaKey).expect(200);

    const told = delivered(one, two);
    await two.api.delete(`/api/users/me/api-keys/${created.id}`).set(student.headers).expect(204);
    await told;
    for (const p of [one, two]) await p.api.get('/api/tasks').set(viaKey).expect(401);
  });

  it('answers from what it keeps: a change that notifies nobody is not seen until a notification names the account', async () => {
    const [one, two] = await twoProcesses();
    const student = await newStudent(one.app);
    await two.api.get('/api/tasks').set(student.headers).expect(200);
    const grant = await testDatabase()
      .db.selectFrom('oauth_grants')
      .select('id')
      .where('user_id', '=', student.id)
      .executeTakeFirstOrThrow();
    await testDatabase()
      .db.updateTable('oauth_grants')
      .set({ revoked_at: new Date() })
      .where('id', '=', grant.id)
      .execute();
    await two.api.get('/api/tasks').set(student.headers).expect(200);

    // Another account's change leaves this one kept; a change of this account drops it.
    const other = await newStudent(one.app);
    let told = delivered(two);
    await setPlan(
      testDatabase().db,
      other.id,
      { plan: 'plus', contract_per_minute: null, contract_per_day: null, contract_ai_per_hour: null },
      new Date(),
    );
    await told;
    await two.api.get('/api/tasks').set(student.headers).expect(200);
    told = delivered(two);
    await setPlan(
      testDatabase().db,
      student.id,
      { plan: 'plus', contract_per_minute: null, contract_per_day: null, contract_ai_per_hour: null },
      new Date(),
    );
    await told;
    await two.api.get('/api/tasks').set(student.headers).expect(401);
  });

  it('reads every principal from the database while its listening connection is lost', async function () {
    const { db, url } = testDatabase();
    if (!url) this.skip(); // the embedded database listens in process: there is no connection to lose
    const listeners = async () =>
      (
        await sql<{
          pid: number;
        }>`select pid from pg_stat_activity where application_name = ${LISTENER_APPLICATION_NAME} and datname = current_database()`.execute(
          db,
        )
      ).rows.map((r) => r.pid);
    const before = await listeners();
    const two = await process({ ownPool: true });
    const own = (await listeners()).filter((pid) => !before.includes(pid));
    assert.equal(own.length, 1, 'one new listening connection');
    const student = await newStudent(two.app);
    await two.api.get('/api/tasks').set(student.headers).expect(200);

    const lost = two.events.next('lost');
    await sql`select pg_terminate_backend(${own[0]!})`.execute(db);
    await lost;
    // Revoked without a notification, as if it had been sent while nobody listened: the next request reads the grant.
    await db.updateTable('oauth_grants').set({ revoked_at: new Date() }).where('user_id', '=', student.id).execute();
    await two.api.get('/api/tasks').set(student.headers).expect(401);
  });
});
