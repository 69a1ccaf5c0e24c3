// The SDK's general client against the real service over HTTP, on a student's whole key life cycle: an account
// created without credentials, the profile read and changed with an access token, a personal key minted, used
// by a key-holding client, and revoked; and the tutor chat read as a stream of events. Every response is checked
// against the spec (checked-fetch.ts).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { localTutor } from '../../services/ai/tutor/local.ts';
import { createGeneralClient, sseEvents } from '../../sdk/index.ts';
import { newStudent } from '../support/general-app.ts';
import { contractCheckedFetch } from './checked-fetch.ts';
import { listeningApp, OUTLASTING_KEEP_ALIVE } from '../support/listening.ts';

describe('SDK: createGeneralClient', () => {
  let service: Awaited<ReturnType<typeof listeningApp>>;
  let fetch: Awaited<ReturnType<typeof contractCheckedFetch>>;

  before(async () => {
    service = await listeningApp({ tutor: localTutor({ pauseMs: 0 }) }, OUTLASTING_KEEP_ALIVE);
    fetch = await contractCheckedFetch();
  });
  after(() => service?.close());

  it('createAccount needs no credentials, and a second account with the same nickname is a 409 problem', async () => {
    const anonymous = createGeneralClient({ baseUrl: service.baseUrl, fetch });
    const nickname = `sdk_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
    const body = {
      email: `${nickname}@example.com`,
      password: 'correct horse battery staple',
      nickname,
      first_name: 'Dana',
    };
    const created = await anonymous.POST('/api/accounts', { body });
    assert.equal(created.response.status, 201);
    assert.equal(created.data?.nickname, nickname);
    const again = await anonymous.POST('/api/accounts', { body: { ...body, email: `other-${body.email}` } });
    assert.equal(again.response.status, 409);
    assert.equal(again.error?.code, 'conflict');
  });

  it('reads and changes the profile with an access token, asked for before each request', async () => {
    const student = await newStudent(service.app);
    let asked = 0;
    const client = createGeneralClient({
      baseUrl: service.baseUrl,
      fetch,
      accessToken: () => (asked++, student.token),
    });
    const me = await client.GET('/api/users/me');
    assert.equal(me.data?.id, student.id);
    const changed = await client.PATCH('/api/users/me', { body: { time_zone: 'Europe/Moscow', bio: 'From the SDK.' } });
    assert.equal(changed.data?.time_zone, 'Europe/Moscow');
    assert.equal(changed.data?.bio, 'From the SDK.');
    assert.equal(asked, 2);
  });

  it('mints a personal key, uses it from a key client, and revokes it', async () => {
    const student = await newStudent(service.app);
    const owner = createGeneralClient({ baseUrl: service.baseUrl, fetch, accessToken: student.token });
    const minted = await owner.POST('/api/users/me/api-keys', {
      body: { name: 'sdk test', scopes: ['profile:read', 'keys:manage'] },
    });
    assert.equal(minted.response.status, 201);
    const { id, key } = minted.data!;

    const scripted = createGeneralClient({ baseUrl: service.baseUrl, fetch, apiKey: key });
    assert.equal((await scripted.GET('/api/users/me')).data?.id, student.id);
    const listed = await scripted.GET('/api/users/me/api-keys');
    assert.deepEqual(
      listed.data?.data.map((k) => k.id),
      [id],
    );

    const revoked = await owner.DELETE('/api/users/me/api-keys/{key_id}', { params: { path: { key_id: id } } });
    assert.equal(revoked.response.status, 204);
    const refused = await scripted.GET('/api/users/me');
    assert.equal(refused.response.status, 401);
    assert.equal(refused.error?.code, 'unauthorized');
  });

  it('streamTutorChat: sseEvents reads the reply as it streams, from message.started to message.completed', async () => {
    const student = await newStudent(service.app);
    const client = createGeneralClient({ baseUrl: service.baseUrl, fetch, accessToken: student.token });
    const { response } = await client.POST('/api/ai/chat', {
      body: { message: 'Can you explain the Krebs cycle?' },
      parseAs: 'stream',
    });
    const events: Array<{ name: string | undefined; data: { conversation_id?: string } }> = [];
    for await (const event of sseEvents(response)) events.push({ name: event.event, data: JSON.parse(event.data) });
    assert.equal(events[0]?.name, 'message.started');
    assert.equal(events.at(-1)?.name, 'message.completed');
    const deltas = events.filter((e) => e.name === 'message.delta');
    assert.ok(deltas.length > 0, 'the reply arrives in pieces');
    assert.ok(
      events.every(
        (e) => e.data.conversation_id === undefined || e.data.conversation_id === events[0]!.data.conversation_id,
      ),
    );
  });
});
