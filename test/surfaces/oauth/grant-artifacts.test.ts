// What a grant owns ends with it (db/queries/grant-artifacts.ts). One walk of GRANT_ARTIFACTS for each way a grant
// ends: an app or an institution creates every artifact through its own credential (tokens, a key, a webhook endpoint,
// an open stream), the grant is revoked, and every artifact is gone or refused, in this process and in a second one
// that learns of it only by the commit's NOTIFY; the open stream ends with credential_revoked. The list and the schema
// are held together: a table that records a grant and has no entry, or an entry this walk cannot check, fails here.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { pino } from 'pino';
import supertest from 'supertest';
import { connect, type Db } from '../../../db/connect.ts';
import { fanOutEvents } from '../../../db/queries/deliveries.ts';
import { GRANT_ARTIFACTS, READINESS_STREAMS } from '../../../db/queries/grant-artifacts.ts';
import { takeLeaseIfRoom } from '../../../db/queries/account-leases.ts';
import { disableInstitution } from '../../../db/queries/oauth.ts';
import { insertPersonalKey } from '../../../db/queries/personal-api-keys.ts';
import { PRINCIPALS_CHANNEL } from '../../../db/queries/principal-changes.ts';
import { notificationsFor, type Notifications } from '../../../db/notifications.ts';
import { insertWithFreshKey } from '../../../server/auth/api-keys.ts';
import { READ_SCOPES } from '../../../services/events/read-scopes.ts';
import { registerClient } from '../../../server/oauth/clients.ts';
import { STUDENT_ID_TOKEN_TYPE, TOKEN_EXCHANGE_GRANT } from '../../../server/oauth/token-exchange.ts';
import { contractClient } from '../../support/contract.ts';
import { newStudentThroughOAuth, type Student } from '../../support/general-app.ts';
import { listen, type Listening } from '../../support/listening.ts';
import { authorize, refresh, TEST_REDIRECT_URI } from '../../support/oauth-flow.ts';
import { buildApp } from '../../support/partner-app.ts';
import { rolledBack } from '../../support/query-fixture.ts';
import { testDatabase } from '../../support/shared-database.ts';
import { openEventStream, type LiveEventStream } from '../../support/sse.ts';

/** What the app asks for: enough to create every artifact of the list. */
const SCOPES = 'profile:read tasks:read keys:manage webhooks:manage exams:read schedule:read';
/** What an open stream may take to end once its grant is revoked: the NOTIFY's round trip and one recheck, with room. */
const STREAM_ENDS_WITHIN_MS = 5_000;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

interface Client {
  client_id: string;
  client_secret?: string;
}

/** What the holder created through its credentials, before the revocation. */
interface Created {
  student: Student;
  client: Client;
  accessToken: string;
  refreshToken: string;
  unusedCode: { code: string; verifier: string };
  key: string;
  endpointId: string;
  stream: LiveEventStream;
  streamEnded: () => boolean;
  /** The student's own endpoint (registered with a key made outside any grant): it outlives the revocation. */
  ownEndpointId: string;
  /** The path of a calendar feed created through the grant, and of one the student created with their own key. */
  feedPath: string;
  ownFeedPath: string;
}

describe('what a grant owns ends with it (GRANT_ARTIFACTS)', () => {
  let one: Awaited<ReturnType<typeof processView>>;
  let two: Awaited<ReturnType<typeof processView>>;
  let server: Listening;
  const opened: Notifications[] = [];
  const pools: Db[] = [];
  const streams: LiveEventStream[] = [];

  /** A process's view: an app on a notification path (and, on PostgreSQL, a pool) of its own, once that path listens. */
  async function processView(options: { ownPool: boolean }) {
    const { url } = testDatabase();
    const db = options.ownPool && url ? connect({ databaseUrl: url }) : testDatabase().db;
    if (db !== testDatabase().db) pools.push(db);
    const notifications = notificationsFor(db, url, { logger: pino({ level: 'silent' }), timeoutMs: 5_000 });
    opened.push(notifications);
    // Streams live long enough to be ended by the revocation, not by their longest time.
    const app = await buildApp({
      db,
      notifications,
      allowPrivateWebhookTargets: true,
      streamSettings: { heartbeatMs: 15_000, maxDurationMs: 10 * 60_000 },
    });
    const heard: Array<{ kind: string; resolve: () => void }> = [];
    const fire = (kind: string) => () => {
      for (const w of heard.splice(0).filter((w) => w.kind === kind)) w.resolve();
    };
    notifications.subscribe(PRINCIPALS_CHANNEL, {
      message: fire('message'),
      missed: fire('missed'),
      lost: fire('lost'),
    });
    const next = (kind: 'message' | 'missed') => new Promise<void>((resolve) => heard.push({ kind, resolve }));
    await next('missed'); // the app's caches subscribed first, so they are listening too
    return { app, api: contractClient(app), next };
  }

  before(async () => {
    one = await processView({ ownPool: false });
    two = await processView({ ownPool: true });
    server = await listen(one.app);
  });
  after(async () => {
    for (const stream of streams) stream.close();
    await server.close();
    await Promise.all(opened.splice(0).map((n) => n.close()));
    await Promise.all(pools.splice(0).map((db) => db.destroy()));
  });

  it('has an entry for every table that records a grant, and a check here for every entry', async () => {
    const { rows } = await sql<{ table_name: string }>`
      select table_name from information_schema.columns where table_schema = current_schema() and column_name = 'grant_id'
      union
      select tc.table_name from information_schema.table_constraints as tc
      join information_schema.constraint_column_usage as cu on cu.constraint_name = tc.constraint_name and cu.table_schema = tc.table_schema
      where tc.constraint_type = 'FOREIGN KEY' and tc.table_schema = current_schema() and cu.table_name = 'oauth_grants' and tc.table_name <> 'oauth_grants'`.execute(
      testDatabase().db,
    );
    const listed = GRANT_ARTIFACTS.map((artifact) => artifact.table).filter((table) => table !== null);
    // Kept only while the previous release still serves (db/migrations/20261206_0301_account_leases.ts): nothing of
    // this release writes it, and it is dropped a release later, with this line.
    const previousReleaseOnly = new Set(['open_streams']);
    assert.deepEqual(
      [...new Set(rows.map((row) => row.table_name))].filter((table) => !previousReleaseOnly.has(table)).sort(),
      [...listed].sort(),
      'every table that names a grant is in GRANT_ARTIFACTS',
    );
    assert.deepEqual(
      GRANT_ARTIFACTS.map((artifact) => artifact.name).sort(),
      Object.keys(CHECKS).sort(),
      'every entry has its check in this walk',
    );
  });

  /** Each way a grant ends, and who holds it. */
  const HOLDERS: Array<{
    title: string;
    holder: () => Promise<Holder>;
    revoke: (created: Created) => Promise<unknown>;
  }> = [
    { title: 'an app, when the student revokes it', holder: () => appHolder(), revoke: (c) => studentRevokes(c) },
    {
      title: 'an institution, when the student revokes it',
      holder: () => institutionHolder(),
      revoke: (c) => studentRevokes(c),
    },
    {
      title: 'an institution, when the operator disables it',
      holder: () => institutionHolder(),
      revoke: async (c) => assert.ok(await disableInstitution(testDatabase().db, c.client.client_id, new Date())),
    },
    {
      title: 'an app, when the student changes the password with an own key',
      holder: () => appHolder(),
      revoke: async (c) => {
        const key = await ownKey(c.student, ['profile:write']);
        await one.api
          .post('/api/users/me/password')
          .set({ 'x-service-api-key': key })
          .send({ current_password: c.student.password, new_password: 'a brand new password' })
          .expect(204);
      },
    },
  ];

  for (const { title, holder, revoke } of HOLDERS) {
    it(`ends everything ${title}, in every process`, async () => {
      const created = await createEverything(await holder());
      const grantIds = await grantsOf(created);
      await placeOfAProcessThatDoesNotHear(created, grantIds[0]!);
      for (const artifact of GRANT_ARTIFACTS) {
        if (artifact.live)
          assert.ok(
            (await artifact.live(testDatabase().db, grantIds)) > 0,
            `${artifact.name}: created through the grant`,
          );
      }
      assert.ok(
        await receives(created, created.endpointId),
        'before: the app’s endpoint gets the student’s task.created',
      );

      assert.equal(created.streamEnded(), false, 'before: the stream is open');
      const heardInTwo = two.next('message');
      await revoke(created);
      await heardInTwo;

      for (const artifact of GRANT_ARTIFACTS) {
        if (artifact.live)
          assert.equal(
            await artifact.live(testDatabase().db, grantIds),
            0,
            `${artifact.name} still live; ends by: ${artifact.endsBy}`,
          );
        await CHECKS[artifact.name]!(created);
      }
    });
  }

  /** How the walk checks, by a request, that each entry is gone: keyed by GRANT_ARTIFACTS names. */
  const CHECKS: Record<string, (created: Created) => Promise<unknown>> = {
    'access tokens': async ({ accessToken }) => {
      for (const view of [one, two]) await view.api.get('/api/users/me').set(bearer(accessToken)).expect(401);
    },
    'authorization codes': async ({ client, unusedCode }) => {
      const res = await supertest(one.app)
        .post('/oauth/token')
        .type('form')
        .send({
          grant_type: 'authorization_code',
          ...client,
          code: unusedCode.code,
          redirect_uri: TEST_REDIRECT_URI,
          code_verifier: unusedCode.verifier,
        });
      assert.ok(res.status === 400 || res.status === 401, `a code of the revoked grant answered ${res.status}`);
    },
    'refresh tokens': async ({ client, refreshToken }) => {
      const res = client.client_secret
        ? await supertest(one.app)
            .post('/oauth/token')
            .type('form')
            .send({ grant_type: 'refresh_token', ...client, refresh_token: refreshToken })
        : await refresh(one.app, { client_id: client.client_id, refresh_token: refreshToken });
      assert.ok(
        res.status === 400 || res.status === 401,
        `a refresh token of the revoked grant answered ${res.status}`,
      );
    },
    'personal keys': async ({ key }) => {
      for (const view of [one, two]) await view.api.get('/api/users/me').set({ 'x-service-api-key': key }).expect(401);
    },
    'webhook endpoints': async (created) => {
      assert.equal(
        await receives(created, created.endpointId),
        false,
        'the app’s endpoint still gets the student’s private notes',
      );
      assert.ok(await receives(created, created.ownEndpointId), 'the student’s own endpoint keeps receiving');
    },
    'calendar feeds': async ({ feedPath, ownFeedPath }) => {
      for (const view of [one, two]) await view.api.get(feedPath).expect(404);
      await one.api.get(ownFeedPath).expect(200);
    },
    [READINESS_STREAMS]: async ({ stream }) => {
      // Its last event says why, then it ends; readiness moves sent before the revocation may come first.
      const deadline = Date.now() + STREAM_ENDS_WITHIN_MS;
      let event = await stream.next(STREAM_ENDS_WITHIN_MS);
      while (event.event !== 'error') event = await stream.next(Math.max(1, deadline - Date.now()));
      assert.equal(
        JSON.parse(event.data).code,
        'credential_revoked',
        `the stream opened with the revoked credential ended with ${event.data}`,
      );
      const ended = await Promise.race([
        stream.ended.then(() => true),
        new Promise<boolean>((resolve) => setTimeout(resolve, Math.max(1, deadline - Date.now()), false)),
      ]);
      assert.ok(ended, 'the readiness stream opened with the revoked credential is still open');
    },
  };

  interface Holder {
    client: Client;
    /** The access token the holder calls the API with, once the student has consented. */
    accessToken: (student: Student, codeTokens: { access_token: string }) => Promise<string>;
  }

  async function appHolder(): Promise<Holder> {
    const client = await registerClient(testDatabase().db, {
      name: 'Walking app',
      redirect_uris: [TEST_REDIRECT_URI],
      scopes: SCOPES.split(' '),
      confidential: false,
    });
    return { client, accessToken: async (_student, tokens) => tokens.access_token };
  }

  async function institutionHolder(): Promise<Holder> {
    const client = await registerClient(testDatabase().db, {
      name: 'Walking school',
      redirect_uris: [TEST_REDIRECT_URI],
      scopes: SCOPES.split(' '),
      confidential: true,
      institution: true,
    });
    return {
      client,
      // What an institution holds: the token it exchanges its own credential for (RFC 8693).
      accessToken: async (student) =>
        (
          await supertest(one.app)
            .post('/oauth/token')
            .type('form')
            .send({
              grant_type: TOKEN_EXCHANGE_GRANT,
              ...client,
              subject_token: student.id,
              subject_token_type: STUDENT_ID_TOKEN_TYPE,
            })
            .expect(200)
        ).body.access_token,
    };
  }

  async function createEverything({ client, accessToken }: Holder): Promise<Created> {
    const student = await newStudentThroughOAuth(one.app);
    const consent = { client_id: client.client_id, email: student.email, password: student.password, scope: SCOPES };
    const { code, verifier } = await authorize(one.app, consent);
    const codeTokens = (
      await supertest(one.app)
        .post('/oauth/token')
        .type('form')
        .send({
          grant_type: 'authorization_code',
          ...client,
          code,
          redirect_uri: TEST_REDIRECT_URI,
          code_verifier: verifier,
        })
        .expect(200)
    ).body;
    const unusedCode = await authorize(one.app, consent);
    const token = await accessToken(student, codeTokens);
    const as = bearer(token);
    const key = (
      await one.api
        .post('/api/users/me/api-keys')
        .set(as)
        .send({ name: 'minted by the holder', scopes: ['profile:read'] })
        .expect(201)
    ).body.key;
    const endpoint = { url: 'http://127.0.0.1:9/hooks', event_types: ['task.created'] };
    const endpointId = (await one.api.post('/api/webhooks/endpoints').set(as).send(endpoint).expect(201)).body.id;
    const own = await ownKey(student, ['tasks:read', 'webhooks:manage']);
    const ownEndpointId = (
      await one.api.post('/api/webhooks/endpoints').set({ 'x-service-api-key': own }).send(endpoint).expect(201)
    ).body.id;
    const feedPath = new URL(
      (await one.api.post('/api/users/me/calendar-feeds').set(as).send({ name: 'the holder’s' }).expect(201)).body.url,
    ).pathname;
    const ownFeedKey = await ownKey(student, ['keys:manage', 'schedule:read']);
    const ownFeedPath = new URL(
      (
        await one.api
          .post('/api/users/me/calendar-feeds')
          .set({ 'x-service-api-key': ownFeedKey })
          .send({ name: 'own' })
          .expect(201)
      ).body.url,
    ).pathname;
    await one.api.get(feedPath).expect(200);
    const stream = await openEventStream(`${server.baseUrl}/api/exams/readiness/stream`, as);
    streams.push(stream);
    assert.equal(stream.status, 200);
    assert.equal((await stream.next()).event, 'snapshot');
    let streamEnded = false;
    void stream.ended.then(() => (streamEnded = true));
    // Both processes keep the credentials' principals, so only the NOTIFY can tell the second one.
    for (const view of [one, two]) {
      await view.api.get('/api/users/me').set(as).expect(200);
      await view.api.get('/api/users/me').set({ 'x-service-api-key': key }).expect(200);
    }
    return {
      student,
      client,
      accessToken: token,
      refreshToken: codeTokens.refresh_token,
      unusedCode,
      key,
      endpointId,
      stream,
      streamEnded: () => streamEnded,
      ownEndpointId,
      feedPath,
      ownFeedPath,
    };
  }

  /**
   * A stream's place taken through the grant by a process that will not hear of the revocation (it died, or lost its
   * listening connection): no process ends that stream, so only the revoking transaction frees its place, and that
   * process, finding the row gone at its next renewal, ends the stream then.
   */
  async function placeOfAProcessThatDoesNotHear({ student }: Created, grantId: string) {
    const row = {
      id: randomUUID(),
      user_id: student.id,
      kind: 'stream',
      grp: 'readiness',
      grant_id: grantId,
      key_id: null,
    };
    assert.deepEqual(
      await takeLeaseIfRoom(testDatabase().db, row, { limit: 10, leaseMs: 10 * 60_000 }, async () => true),
      { taken: true },
    );
  }

  async function grantsOf({ student, client }: Created): Promise<string[]> {
    const rows = await testDatabase()
      .db.selectFrom('oauth_grants')
      .select('id')
      .where('user_id', '=', student.id)
      .where('client_id', '=', client.client_id)
      .execute();
    return rows.map((row) => row.id);
  }

  function studentRevokes({ student, client }: Created) {
    return one.api.delete(`/api/users/me/authorizations/${client.client_id}`).set(student.headers).expect(204);
  }

  async function ownKey(student: Student, scopes: string[]): Promise<string> {
    const made = await insertWithFreshKey(({ prefix, hash }) =>
      insertPersonalKey(testDatabase().db, {
        user_id: student.id,
        prefix,
        key_hash: hash,
        name: 'own',
        scopes,
        grant_id: null,
      }),
    );
    return made.key;
  }

  /** Whether the fan-out would send the student's next task.created (with private notes) to the endpoint. */
  async function receives({ student }: Created, endpointId: string): Promise<boolean> {
    const own = await ownKey(student, ['tasks:write']);
    await one.api
      .post('/api/tasks')
      .set({ 'x-service-api-key': own })
      .send({ title: 'Diary', due_at: '2030-01-01T10:00:00Z', course: 'Private', notes: 'private notes' })
      .expect(201);
    const db = testDatabase().db;
    const event = await db
      .selectFrom('events')
      .select(['id', 'type', 'user_id'])
      .where('user_id', '=', student.id)
      .where('type', '=', 'task.created')
      .orderBy('created_at', 'desc')
      .limit(1)
      .executeTakeFirstOrThrow();
    // Fanned out again, alone (made the oldest waiting, its deliveries gone), in a transaction rolled back afterwards.
    const { deliveries } = await rolledBack(db, async (trx) => {
      await trx.deleteFrom('webhook_deliveries').where('event_id', '=', event.id).execute();
      await sql`update events set fanned_out_at = null, created_at = to_timestamp(0) where id = ${event.id}`.execute(
        trx,
      );
      return fanOutEvents(trx, { limit: 1, at: new Date(), readScopes: READ_SCOPES });
    });
    return deliveries.some((delivery) => delivery.event_id === event.id && delivery.endpoint_id === endpointId);
  }
});
