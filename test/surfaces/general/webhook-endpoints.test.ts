// A student's webhook endpoints through the API: registration with a secret shown once, the URL rules (with the
// operator setting off), the cap, changes and removal, rotation with both secrets signing during the overlap, a test
// event and a re-send through the delivery queue. Every response is checked against the spec by the contract client.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { envelopeOf } from '../../../services/events/emit.ts';
import { signingSecrets } from '../../../services/webhooks/secrets.ts';
import { MAX_ENDPOINTS_PER_STUDENT } from '../../../domain/bounds.ts';
import { insertPersonalKey } from '../../../db/queries/personal-api-keys.ts';
import { insertWithFreshKey } from '../../../server/auth/api-keys.ts';
import { registerTestClient, signIn } from '../../support/oauth-flow.ts';
import { assertEventConforms } from '../../support/event-contract.ts';
import { generalApp, type Student } from '../../support/general-app.ts';
import { describeIdempotentCreate } from '../../support/idempotent-create.ts';
import { testSecrets } from '../../support/partner-app.ts';
import { assertIdRefusals } from '../../support/refusals.ts';

type Ctx = Awaited<ReturnType<typeof generalApp>>;
type Api = Ctx['api'];

const PATH = '/api/webhooks/endpoints';
/** On loopback: the tests that register it allow private targets, as the operator setting does. */
const RECEIVER = 'http://127.0.0.1:9/hooks';

async function register(api: Api, student: Student, fields: Record<string, unknown> = {}) {
  return (
    await api
      .post(PATH)
      .set(student.headers)
      .send({ url: RECEIVER, event_types: ['task.created', 'task.completed'], ...fields })
      .expect(201)
  ).body;
}

/** An app whose endpoints may point at loopback, as WEBHOOK_ALLOW_PRIVATE_TARGETS=1 allows. */
const loopbackApp = () => generalApp({ allowPrivateWebhookTargets: true });

describe('createWebhookEndpoint', () => {
  it('registers an endpoint and shows its whsec_ secret this once, with Cache-Control: no-store', async () => {
    const { api, newStudent } = await loopbackApp();
    const alice = await newStudent();
    const res = await api
      .post(PATH)
      .set(alice.headers)
      .send({ url: RECEIVER, event_types: ['task.created'], description: 'My planner' })
      .expect(201);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.match(res.body.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(res.body.status, 'enabled');
    assert.equal(res.body.description, 'My planner');
    assert.deepEqual(res.body.event_types, ['task.created']);

    const got = await api.get(`${PATH}/${res.body.id}`).set(alice.headers).expect(200);
    const listed = await api.get(PATH).set(alice.headers).expect(200);
    assert.equal(got.headers['cache-control'], 'private');
    for (const shown of [got.body, ...listed.body.data]) {
      assert.ok(!('secret' in shown), 'the secret is shown at creation only');
      assert.ok(!JSON.stringify(shown).includes(res.body.secret.slice(6)));
    }
    const { secret, ...endpoint } = res.body;
    assert.deepEqual(got.body, endpoint);
    assert.deepEqual(listed.body.data, [endpoint]);
  });

  it('stores the secret sealed, never in the clear', async () => {
    const { api, db, newStudent } = await loopbackApp();
    const alice = await newStudent();
    const { id, secret } = await register(api, alice);
    const row = await db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    assert.ok(!JSON.stringify(row).includes(secret.slice(6)));
    assert.deepEqual(signingSecrets(testSecrets, row, new Date()), [secret]);
  });

  it('registers a disabled endpoint when asked', async () => {
    const { api, newStudent } = await loopbackApp();
    const endpoint = await register(api, await newStudent(), { enabled: false });
    assert.equal(endpoint.status, 'disabled');
  });

  it('refuses with 400 naming body.url an http URL, loopback, private and link-local addresses, and a host that does not resolve', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const refusals: Array<[string, string]> = [
      ['http://receiver.example.com/hooks', 'webhook_url_not_https'],
      ['https://127.0.0.1/hooks', 'webhook_url_not_public'],
      ['https://[::1]/hooks', 'webhook_url_not_public'],
      ['https://10.1.2.3/hooks', 'webhook_url_not_public'],
      ['https://192.168.0.10/hooks', 'webhook_url_not_public'],
      ['https://169.254.169.254/latest/meta-data', 'webhook_url_not_public'],
      ['https://[::ffff:127.0.0.1]/hooks', 'webhook_url_not_public'],
      ['https://no-such-host.invalid/hooks', 'webhook_url_unresolvable'],
      ['https://user:password@receiver.example.com/hooks', 'webhook_url_invalid'],
    ];
    for (const [url, code] of refusals) {
      const res = await api
        .post(PATH)
        .set(alice.headers)
        .send({ url, event_types: ['task.created'] })
        .expect(400);
      assert.equal(res.body.code, code, url);
      assert.deepEqual(
        res.body.errors.map((e: { path: string }) => e.path),
        ['body.url'],
        url,
      );
      // A developer with a local receiver learns the switch for it, and that the server reads it at its start.
      if (code === 'webhook_url_not_https') {
        assert.match(res.body.detail, /WEBHOOK_ALLOW_PRIVATE_TARGETS=1 and restart the server/);
      }
    }
    assert.deepEqual((await api.get(PATH).set(alice.headers).expect(200)).body.data, []);
  });

  it('answers 400 without kinds or with an unknown kind, 401 without credentials, 403 without webhooks:manage', async () => {
    const { api, newStudent } = await loopbackApp();
    const alice = await newStudent();
    await api.post(PATH).set(alice.headers).send({ url: RECEIVER, event_types: [] }).expect(400);
    await api
      .post(PATH)
      .set(alice.headers)
      .send({ url: RECEIVER, event_types: ['task.exploded'] })
      .expect(400);
    await api
      .post(PATH)
      .send({ url: RECEIVER, event_types: ['task.created'] })
      .expect(401);
    const reader = await newStudent({ scopes: ['tasks:read'] });
    assert.equal(
      (
        await api
          .post(PATH)
          .set(reader.headers)
          .send({ url: RECEIVER, event_types: ['task.created'] })
          .expect(403)
      ).body.code,
      'insufficient_scope',
    );
  });

  it('needs the read scope of each kind subscribed to (an endpoint is a way to read)', async () => {
    const { api, newStudent } = await loopbackApp();
    const tasksOnly = await newStudent({ scopes: ['webhooks:manage', 'tasks:read'] });
    await register(api, tasksOnly, { event_types: ['task.created', 'task.deleted'] });
    const res = await api
      .post(PATH)
      .set(tasksOnly.headers)
      .send({ url: RECEIVER, event_types: ['task.created', 'exam.created'] })
      .expect(403);
    assert.equal(res.body.code, 'insufficient_scope');
    assert.match(res.body.detail, /exams:read/);
  });

  it(`allows ${MAX_ENDPOINTS_PER_STUDENT} endpoints per student: one more is 409 endpoint_limit_reached`, async () => {
    const { api, newStudent } = await loopbackApp();
    const [alice, bob] = await Promise.all([newStudent(), newStudent()]);
    for (let i = 0; i < MAX_ENDPOINTS_PER_STUDENT; i++) await register(api, alice, { description: `#${i}` });
    const res = await api
      .post(PATH)
      .set(alice.headers)
      .send({ url: RECEIVER, event_types: ['task.created'] })
      .expect(409);
    assert.equal(res.body.code, 'endpoint_limit_reached');
    await register(api, bob); // the cap is per student
    const first = (await api.get(PATH).set(alice.headers).expect(200)).body.data[0];
    await api.delete(`${PATH}/${first.id}`).set(alice.headers).expect(204);
    await register(api, alice);
  });

  describeIdempotentCreate({
    prepare: async () => PATH,
    body: { url: RECEIVER, event_types: ['task.created'] },
    otherBody: { url: RECEIVER, event_types: ['task.completed'] },
    count: async (api, student) => (await api.get(PATH).set(student.headers).expect(200)).body.data.length,
    app: loopbackApp,
  });
});

describe('listWebhookEndpoints', () => {
  it('lists the student’s own endpoints, oldest first', async () => {
    const { api, newStudent } = await loopbackApp();
    const [alice, bob] = await Promise.all([newStudent(), newStudent()]);
    const first = await register(api, alice, { description: 'first' });
    const second = await register(api, alice, { description: 'second' });
    await register(api, bob);
    const { data } = (await api.get(PATH).set(alice.headers).expect(200)).body;
    assert.deepEqual(
      data.map((e: { id: string }) => e.id),
      [first.id, second.id],
    );
  });

  it('answers 400 for two credentials at once, 401 without credentials and 403 without webhooks:manage', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    assert.equal(
      (await api.get(PATH).set(alice.headers).set('X-Service-API-Key', 'svc_live_x').expect(400)).body.code,
      'invalid_request',
    );
    await api.get(PATH).expect(401);
    await api
      .get(PATH)
      .set((await newStudent({ scopes: ['tasks:read'] })).headers)
      .expect(403);
  });
});

describe('getWebhookEndpoint', () => {
  it('answers 401, 403, 404 (unknown and another student’s endpoint), 400 for a malformed id', () =>
    assertIdRefusals({ method: 'get', path: (id) => `${PATH}/${id}`, otherScope: 'tasks:read', create: endpointOf }));
});

describe('updateWebhookEndpoint', () => {
  it('changes the URL, kinds and description sent, and keeps the rest', async () => {
    const { api, newStudent } = await loopbackApp();
    const alice = await newStudent();
    const endpoint = await register(api, alice, { description: 'before' });
    const res = await api
      .patch(`${PATH}/${endpoint.id}`)
      .set(alice.headers)
      .send({ url: 'http://127.0.0.1:10/other', event_types: ['exam.created'] })
      .expect(200);
    assert.equal(res.body.url, 'http://127.0.0.1:10/other');
    assert.deepEqual(res.body.event_types, ['exam.created']);
    assert.equal(res.body.description, 'before');
    assert.ok(res.body.updated_at > endpoint.updated_at);
  });

  it('disables and enables; enabling one the service disabled for failing clears failing_since and its reason', async () => {
    const { api, db, newStudent } = await loopbackApp();
    const alice = await newStudent();
    const endpoint = await register(api, alice);
    assert.equal(
      (await api.patch(`${PATH}/${endpoint.id}`).set(alice.headers).send({ enabled: false }).expect(200)).body.status,
      'disabled',
    );

    // What delivery does after three days of failures (services/webhooks/).
    const failingSince = new Date(Date.now() - 3 * 86_400_000);
    await db
      .updateTable('webhook_endpoints')
      .set({ enabled: false, disabled_reason: 'failing', failing_since: failingSince })
      .where('id', '=', endpoint.id)
      .execute();
    const failing = (await api.get(`${PATH}/${endpoint.id}`).set(alice.headers).expect(200)).body;
    assert.equal(failing.status, 'disabled_failing');
    assert.equal(failing.failing_since, failingSince.toISOString());

    const enabled = (await api.patch(`${PATH}/${endpoint.id}`).set(alice.headers).send({ enabled: true }).expect(200))
      .body;
    assert.equal(enabled.status, 'enabled');
    assert.equal(enabled.failing_since, null);
    const row = await db
      .selectFrom('webhook_endpoints')
      .select(['enabled', 'disabled_reason', 'failing_since'])
      .where('id', '=', endpoint.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(row, { enabled: true, disabled_reason: null, failing_since: null });
  });

  it('keeps the failing run of an endpoint that is on when it is “enabled” again', async () => {
    const { api, db, newStudent } = await loopbackApp();
    const alice = await newStudent();
    const endpoint = await register(api, alice);
    const failingSince = new Date(Date.now() - 86_400_000);
    await db
      .updateTable('webhook_endpoints')
      .set({ failing_since: failingSince })
      .where('id', '=', endpoint.id)
      .execute();
    const res = await api.patch(`${PATH}/${endpoint.id}`).set(alice.headers).send({ enabled: true }).expect(200);
    assert.equal(res.body.failing_since, failingSince.toISOString());
  });

  it('refuses a URL delivery would refuse, and kinds beyond the credential’s read scopes', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const endpoint = await register(await loopbackApp().then((c) => c.api), alice);
    const res = await api
      .patch(`${PATH}/${endpoint.id}`)
      .set(alice.headers)
      .send({ url: 'https://127.0.0.1/hooks' })
      .expect(400);
    assert.equal(res.body.code, 'webhook_url_not_public');
    await api.patch(`${PATH}/${endpoint.id}`).set(alice.headers).send({}).expect(400);
    const narrow = await newStudent({ scopes: ['webhooks:manage', 'tasks:read'] });
    const own = await register(await loopbackApp().then((c) => c.api), narrow);
    await api
      .patch(`${PATH}/${own.id}`)
      .set(narrow.headers)
      .send({ event_types: ['user.warned'] })
      .expect(403);
  });

  it('answers 401, 403, 404 (unknown and another student’s endpoint), 400 for a malformed id', () =>
    assertIdRefusals({
      method: 'patch',
      path: (id) => `${PATH}/${id}`,
      body: { description: 'x' },
      otherScope: 'tasks:read',
      create: endpointOf,
    }));
});

describe('whose an endpoint is (it ends with the grant it was made or redirected through)', () => {
  it('keeps the endpoints the student made with an own key; ends those an app made, or pointed elsewhere, with its grant', async () => {
    const { api, db, newStudent, app } = await loopbackApp();
    const alice = await newStudent();
    const made = await insertWithFreshKey(({ prefix, hash }) =>
      insertPersonalKey(db, {
        user_id: alice.id,
        prefix,
        key_hash: hash,
        name: 'own',
        scopes: ['tasks:read', 'webhooks:manage'],
        grant_id: null,
      }),
    );
    const own = { 'x-service-api-key': made.key };
    const kept = (
      await api
        .post(PATH)
        .set(own)
        .send({ url: RECEIVER, event_types: ['task.created'] })
        .expect(201)
    ).body;
    const redirected = (
      await api
        .post(PATH)
        .set(own)
        .send({ url: RECEIVER, event_types: ['task.created'] })
        .expect(201)
    ).body;
    const reclaimed = (
      await api
        .post(PATH)
        .set(own)
        .send({ url: RECEIVER, event_types: ['task.created'] })
        .expect(201)
    ).body;

    const client = (await registerTestClient(['tasks:read', 'webhooks:manage'])).client_id;
    const tokens = await signIn(app, {
      client_id: client,
      email: alice.email,
      password: alice.password,
      scope: 'tasks:read webhooks:manage',
    });
    const asApp = { authorization: `Bearer ${tokens.access_token}` };
    const appMade = (
      await api
        .post(PATH)
        .set(asApp)
        .send({ url: RECEIVER, event_types: ['task.created'] })
        .expect(201)
    ).body;
    // The app points the student's own endpoint at a receiver of its choosing: the endpoint is the app's from now on.
    await api.patch(`${PATH}/${redirected.id}`).set(asApp).send({ url: 'http://127.0.0.1:9/app-receiver' }).expect(200);
    // One the app pointed elsewhere and the student pointed back is the student's again; a rename changes no owner.
    await api.patch(`${PATH}/${reclaimed.id}`).set(asApp).send({ url: 'http://127.0.0.1:9/app-receiver' }).expect(200);
    await api.patch(`${PATH}/${reclaimed.id}`).set(own).send({ url: RECEIVER }).expect(200);
    await api.patch(`${PATH}/${kept.id}`).set(asApp).send({ description: 'renamed by the app' }).expect(200);

    await api.delete(`/api/users/me/authorizations/${client}`).set(alice.headers).expect(204);
    const left = (await api.get(PATH).set(own).expect(200)).body.data.map((endpoint: { id: string }) => endpoint.id);
    assert.deepEqual(left.sort(), [kept.id, reclaimed.id].sort());
    assert.ok(!left.includes(appMade.id) && !left.includes(redirected.id));
  });
});

describe('deleteWebhookEndpoint', () => {
  it('removes the endpoint and its deliveries', async () => {
    const { api, db, newStudent } = await loopbackApp();
    const alice = await newStudent();
    const endpoint = await register(api, alice);
    await api.post(`${PATH}/${endpoint.id}/test`).set(alice.headers).expect(202);
    await api.delete(`${PATH}/${endpoint.id}`).set(alice.headers).expect(204);
    await api.get(`${PATH}/${endpoint.id}`).set(alice.headers).expect(404);
    assert.equal(
      (await db.selectFrom('webhook_deliveries').select('id').where('endpoint_id', '=', endpoint.id).execute()).length,
      0,
    );
  });

  it('answers 401, 403, 404 (unknown and another student’s endpoint), 400 for a malformed id', () =>
    assertIdRefusals({
      method: 'delete',
      path: (id) => `${PATH}/${id}`,
      otherScope: 'tasks:read',
      create: endpointOf,
    }));
});

describe('rotateWebhookEndpointSecret', () => {
  it('shows a new secret once; for 24 hours both secrets sign, then only the new one', async () => {
    const { api, db, newStudent } = await loopbackApp();
    const alice = await newStudent();
    const endpoint = await register(api, alice);
    const before = Date.now();
    const res = await api.post(`${PATH}/${endpoint.id}/secret/rotate`).set(alice.headers).expect(200);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.notEqual(res.body.secret, endpoint.secret);
    const expires = Date.parse(res.body.previous_secret_expires_at);
    assert.ok(expires >= before + 86_400_000 && expires <= Date.now() + 86_400_000);
    assert.ok(!('secret' in (await api.get(`${PATH}/${endpoint.id}`).set(alice.headers).expect(200)).body));

    const row = await db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('id', '=', endpoint.id)
      .executeTakeFirstOrThrow();
    const during = signingSecrets(testSecrets, row, new Date());
    assert.deepEqual(during, [res.body.secret, endpoint.secret]);
    assert.deepEqual(signingSecrets(testSecrets, row, new Date(expires + 1)), [res.body.secret]);

    // A receiver holding either secret verifies a delivery signed during the overlap (one signature per secret).
    const body = JSON.stringify({ hello: 'world' });
    const id = randomUUID();
    const at = new Date();
    const signature = during.map((secret) => new Webhook(secret).sign(id, at, body)).join(' ');
    const headers = {
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': signature,
    };
    for (const secret of [endpoint.secret, res.body.secret])
      assert.deepEqual(new Webhook(secret).verify(body, headers), { hello: 'world' });
  });

  it('rotating again within the overlap drops the oldest secret at once', async () => {
    const { api, db, newStudent } = await loopbackApp();
    const alice = await newStudent();
    const endpoint = await register(api, alice);
    const second = (await api.post(`${PATH}/${endpoint.id}/secret/rotate`).set(alice.headers).expect(200)).body;
    const third = (await api.post(`${PATH}/${endpoint.id}/secret/rotate`).set(alice.headers).expect(200)).body;
    const row = await db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('id', '=', endpoint.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(signingSecrets(testSecrets, row, new Date()), [third.secret, second.secret]);
  });

  it('answers 401, 403, 404 (unknown and another student’s endpoint), 400 for a malformed id', () =>
    assertIdRefusals({
      method: 'post',
      path: (id) => `${PATH}/${id}/secret/rotate`,
      otherScope: 'tasks:read',
      create: endpointOf,
    }));
});

describe('sendWebhookTestEvent', () => {
  it('stores a webhook.test event for this endpoint only and queues its delivery', async () => {
    const { api, db, newStudent } = await loopbackApp();
    const alice = await newStudent();
    const endpoint = await register(api, alice);
    const other = await register(api, alice, { event_types: ['task.created'] });
    const res = await api.post(`${PATH}/${endpoint.id}/test`).set(alice.headers).expect(202);
    assert.equal(res.body.event_type, 'webhook.test');
    assert.equal(res.body.status, 'pending');

    const event = await db
      .selectFrom('events')
      .select(['id', 'type', 'user_id', 'data', 'created_at', 'fanned_out_at'])
      .where('id', '=', res.body.event_id)
      .executeTakeFirstOrThrow();
    const envelope = envelopeOf(event);
    assertEventConforms(envelope);
    assert.equal((envelope.data as { object: { id: string } }).object.id, endpoint.id);
    assert.notEqual(event.fanned_out_at, null, 'stored as fanned out: the fan-out passes a test by');
    const deliveries = await db
      .selectFrom('webhook_deliveries')
      .select(['endpoint_id'])
      .where('event_id', '=', event.id)
      .execute();
    assert.deepEqual(deliveries, [{ endpoint_id: endpoint.id }]);
    assert.equal((await api.get(`${PATH}/${other.id}/deliveries`).set(alice.headers).expect(200)).body.data.length, 0);
  });

  it('answers 409 endpoint_disabled for a disabled endpoint', async () => {
    const { api, newStudent } = await loopbackApp();
    const alice = await newStudent();
    const endpoint = await register(api, alice, { enabled: false });
    assert.equal(
      (await api.post(`${PATH}/${endpoint.id}/test`).set(alice.headers).expect(409)).body.code,
      'endpoint_disabled',
    );
  });

  it('answers 401, 403, 404 (unknown and another student’s endpoint), 400 for a malformed id', () =>
    assertIdRefusals({
      method: 'post',
      path: (id) => `${PATH}/${id}/test`,
      otherScope: 'tasks:read',
      create: endpointOf,
    }));
});

describe('listWebhookDeliveries', () => {
  it('lists deliveries newest first, a page at a time', async () => {
    const { api, newStudent } = await loopbackApp();
    const alice = await newStudent();
    const endpoint = await register(api, alice);
    const sent: string[] = [];
    for (let i = 0; i < 3; i++)
      sent.push((await api.post(`${PATH}/${endpoint.id}/test`).set(alice.headers).expect(202)).body.id);
    const first = (
      await api.get(`${PATH}/${endpoint.id}/deliveries`).query({ limit: 2 }).set(alice.headers).expect(200)
    ).body;
    assert.equal(first.has_more, true);
    const second = (
      await api
        .get(`${PATH}/${endpoint.id}/deliveries`)
        .query({ limit: 2, cursor: first.next_cursor })
        .set(alice.headers)
        .expect(200)
    ).body;
    assert.equal(second.has_more, false);
    assert.equal(second.next_cursor, null);
    assert.deepEqual(
      [...first.data, ...second.data].map((d: { id: string }) => d.id),
      [...sent].reverse(),
    );
  });

  it('shows the attempts count and the last attempt with its response status', async () => {
    const { api, db, newStudent } = await loopbackApp();
    const alice = await newStudent();
    const endpoint = await register(api, alice);
    const delivery = (await api.post(`${PATH}/${endpoint.id}/test`).set(alice.headers).expect(202)).body;
    // Two attempts as delivery records them (services/webhooks/): a 500, then a timeout.
    const first = new Date(Date.now() - 60_000);
    const second = new Date(Date.now() - 1_000);
    await db
      .insertInto('webhook_attempts')
      .values([
        { delivery_id: delivery.id, started_at: first, duration_ms: 40, response_status: 500, error: null },
        {
          delivery_id: delivery.id,
          started_at: second,
          duration_ms: 10_000,
          response_status: null,
          error: 'timed out after 10000 ms',
        },
      ])
      .execute();
    await db
      .updateTable('webhook_deliveries')
      .set({ attempts: 2, last_attempt_at: second })
      .where('id', '=', delivery.id)
      .execute();
    const [listed] = (await api.get(`${PATH}/${endpoint.id}/deliveries`).set(alice.headers).expect(200)).body.data;
    assert.equal(listed.attempts, 2);
    assert.deepEqual(listed.last_attempt, {
      started_at: second.toISOString(),
      duration_ms: 10_000,
      response_status: null,
      error: 'timed out after 10000 ms',
    });
  });

  it('answers 400 for a malformed cursor', async () => {
    const { api, newStudent } = await loopbackApp();
    const alice = await newStudent();
    const endpoint = await register(api, alice);
    await api
      .get(`${PATH}/${endpoint.id}/deliveries`)
      .query({ cursor: 'bm90LWEtY3Vyc29y' })
      .set(alice.headers)
      .expect(400);
  });

  it('answers 401, 403, 404 (unknown and another student’s endpoint), 400 for a malformed id', () =>
    assertIdRefusals({
      method: 'get',
      path: (id) => `${PATH}/${id}/deliveries`,
      otherScope: 'tasks:read',
      create: endpointOf,
    }));
});

describe('resendWebhookDelivery', () => {
  it('makes a finished delivery pending again, due now, with the same event', async () => {
    const { api, db, newStudent } = await loopbackApp();
    const alice = await newStudent();
    const endpoint = await register(api, alice);
    const delivery = (await api.post(`${PATH}/${endpoint.id}/test`).set(alice.headers).expect(202)).body;
    await db
      .updateTable('webhook_deliveries')
      .set({ status: 'failed', next_attempt_at: null })
      .where('id', '=', delivery.id)
      .execute();
    const res = await api
      .post(`${PATH}/${endpoint.id}/deliveries/${delivery.id}/resend`)
      .set(alice.headers)
      .expect(202);
    assert.equal(res.body.id, delivery.id);
    assert.equal(res.body.event_id, delivery.event_id);
    assert.equal(res.body.status, 'pending');
    assert.ok(Date.parse(res.body.next_attempt_at) <= Date.now());
  });

  it('answers 404 for a delivery of another endpoint or student, like an unknown one; 409 for a disabled endpoint', async () => {
    const { api, newStudent } = await loopbackApp();
    const [alice, bob] = await Promise.all([newStudent(), newStudent()]);
    const endpoint = await register(api, alice);
    const other = await register(api, alice);
    const delivery = (await api.post(`${PATH}/${endpoint.id}/test`).set(alice.headers).expect(202)).body;
    const elsewhere = await api
      .post(`${PATH}/${other.id}/deliveries/${delivery.id}/resend`)
      .set(alice.headers)
      .expect(404);
    const unknown = await api
      .post(`${PATH}/${endpoint.id}/deliveries/${randomUUID()}/resend`)
      .set(alice.headers)
      .expect(404);
    assert.equal(elsewhere.body.detail, unknown.body.detail);
    await api.post(`${PATH}/${endpoint.id}/deliveries/${delivery.id}/resend`).set(bob.headers).expect(404);
    await api.post(`${PATH}/${endpoint.id}/deliveries/not-a-uuid/resend`).set(alice.headers).expect(400);
    await api.patch(`${PATH}/${endpoint.id}`).set(alice.headers).send({ enabled: false }).expect(200);
    assert.equal(
      (await api.post(`${PATH}/${endpoint.id}/deliveries/${delivery.id}/resend`).set(alice.headers).expect(409)).body
        .code,
      'endpoint_disabled',
    );
  });

  it('answers 401, 403, 404 (unknown and another student’s endpoint), 400 for a malformed id', () =>
    assertIdRefusals({
      method: 'post',
      path: (id) => `${PATH}/${id}/deliveries/${randomUUID()}/resend`,
      otherScope: 'tasks:read',
      create: endpointOf,
    }));
});

/** An endpoint of `owner`'s, registered directly (the app under test need not allow loopback). */
async function endpointOf(_api: Api, owner: Student): Promise<string> {
  const { api } = await loopbackApp();
  return (await register(api, owner)).id;
}
