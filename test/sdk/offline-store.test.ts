// The SDK's offline store through a phone's day against the real service over HTTP: it loads the state with `*`, goes
// offline (no request leaves it), makes 20 edits (a task made, edited and closed by its temp id, a deck and a card
// made offline and the card reviewed offline), is saved and restored as a phone app would be, comes back, pushes (the
// first answer lost in a tunnel, so it pushes again) and pulls once: its lists equal the server's field by field, the
// batch sent again changes nothing, and a second store that pulls sees every change. Every response is checked
// against the spec (checked-fetch.ts).
import assert from 'node:assert/strict';
import { createGeneralClient, OfflineStore, type SyncCommand, type SyncObject } from '../../sdk/index.ts';
import { changesListed } from '../support/feed-horizon.ts';
import { newStudent, type Student } from '../support/general-app.ts';
import { listeningApp, OUTLASTING_KEEP_ALIVE } from '../support/listening.ts';
import { testDatabase } from '../support/shared-database.ts';
import { contractCheckedFetch } from './checked-fetch.ts';

const DUE = '2026-12-08T09:00:00Z';
/** The REST list that answers each kind the pull keeps; kinds the pull adds later are compared once listed here. */
const REST_LISTS: Record<string, string> = {
  tasks: '/api/tasks',
  exams: '/api/exams',
  decks: '/api/flashcards/decks',
};

/**
 * Fields computed at each read from the date and the student's whole activity: an exam's readiness moves with every
 * study action (a task closed, a card reviewed), which emits no exam event, so the pull brings them only with the
 * exam's next change. They are left out of the comparison; every other field is compared.
 */
const DERIVED: Record<string, readonly string[]> = { exams: ['readiness', 'days_left'] };

const comparable = (kind: string, objects: Iterable<SyncObject>) =>
  [...objects]
    .map((object) => Object.fromEntries(Object.entries(object).filter(([field]) => !DERIVED[kind]?.includes(field))))
    .sort((a, b) => String(a.id).localeCompare(String(b.id)));

/** A phone's connection: it can go offline, and it can lose the answer to a request that reached the service. */
function phoneNetwork(checked: (request: Request) => Promise<Response>) {
  const network = {
    online: true,
    loseNextAnswer: false,
    sent: [] as Array<{ method: string; path: string; body: string }>,
    fetch: async (request: Request) => {
      if (!network.online) throw new TypeError('fetch failed: offline');
      const body = request.method === 'GET' ? '' : await request.clone().text();
      network.sent.push({ method: request.method, path: new URL(request.url).pathname, body });
      const response = await checked(request);
      if (network.loseNextAnswer) {
        network.loseNextAnswer = false;
        throw new TypeError('fetch failed: the answer was lost');
      }
      return response;
    },
  };
  return network;
}

describe('SDK: OfflineStore', () => {
  let service: Awaited<ReturnType<typeof listeningApp>>;
  let checked: Awaited<ReturnType<typeof contractCheckedFetch>>;

  before(async () => {
    service = await listeningApp({}, OUTLASTING_KEEP_ALIVE);
    checked = await contractCheckedFetch();
  });
  after(() => service?.close());

  const clientOf = (student: Student, fetch = checked) =>
    createGeneralClient({ baseUrl: service.baseUrl, fetch, accessToken: student.token });

  /** The student's state as the REST lists answer it, for every kind the store keeps that a list answers. */
  async function serverState(student: Student, kinds: readonly string[]) {
    const lists = await serverLists(student, kinds);
    return Object.fromEntries(Object.entries(lists).map(([kind, objects]) => [kind, comparable(kind, objects)]));
  }
  async function serverLists(student: Student, kinds: readonly string[]) {
    const client = clientOf(student);
    const state: Record<string, SyncObject[]> = {};
    for (const kind of kinds.filter((k) => REST_LISTS[k])) {
      const { data } = await client.GET(REST_LISTS[kind] as '/api/tasks', { params: { query: { limit: 100 } } });
      state[kind] = data!.data as unknown as SyncObject[];
    }
    return state;
  }
  const storeState = (store: OfflineStore) =>
    Object.fromEntries(
      store
        .kinds()
        .filter((kind) => REST_LISTS[kind])
        .map((kind) => [kind, comparable(kind, store.all(kind))]),
    );

  it('plays a phone’s day offline: 20 edits, one push, one pull, and the server, the phone and a laptop agree', async () => {
    const alice = await newStudent(service.app);
    const web = clientOf(alice);
    const existing: string[] = [];
    for (const title of ['Reading', 'Problem set', 'Lab', 'Slides']) {
      const { data } = await web.POST('/api/tasks', { body: { title, due_at: DUE, course: 'Physics' } });
      existing.push(data!.id);
    }
    await web.POST('/api/exams', { body: { subject: 'Physics', exam_date: '2027-01-20' } });

    const network = phoneNetwork(checked);
    let phone = new OfflineStore(clientOf(alice, network.fetch));
    const laptop = new OfflineStore(clientOf(alice));
    await phone.load(2); // pages of two: a full sync in several answers
    await laptop.load();
    assert.ok(phone.kinds().includes('tasks') && phone.kinds().includes('exams'));
    assert.deepEqual(storeState(phone), await serverState(alice, phone.kinds()));
    assert.equal(phone.all('tasks').length, 4);

    // Offline: every edit is queued and shown at once; nothing leaves the phone.
    network.online = false;
    const sentBefore = network.sent.length;
    const essay = phone.create('task_add', { title: 'Essay', due_at: DUE, course: 'History' });
    phone.edit('task_update', essay, { notes: 'outline first', priority: 'high' });
    phone.edit('task_update', existing[0]!, { priority: 'high' });
    phone.edit('task_close', existing[1]!);
    phone.edit('task_delete', existing[2]!);
    const sets = Array.from({ length: 9 }, (_, i) =>
      phone.create('task_add', { title: `Flashcard set ${i}`, due_at: DUE, course: null }),
    );
    phone.edit('task_update', sets[3]!, { title: 'Flashcard set 3, revised' });
    phone.edit('task_delete', sets[7]!);
    const deck = phone.create('deck_add', { title: 'Derivatives' });
    const card = phone.create('card_add', { front: 'd/dx sin x', back: 'cos x' }, { id: deck });
    const reviewedAt = new Date(Date.now() - 2 * 3_600_000).toISOString();
    phone.edit('card_review', card, { grade: 4, reviewed_at: reviewedAt });
    phone.edit('task_close', essay);
    assert.equal(phone.pending().length, 20);
    assert.equal(network.sent.length, sentBefore, 'no request while offline');
    assert.deepEqual(
      { ...phone.get('tasks', essay), id: undefined },
      {
        id: undefined,
        title: 'Essay',
        due_at: DUE,
        course: 'History',
        notes: 'outline first',
        priority: 'high',
        status: 'completed',
        completed_at: null,
      },
      'the made task shows with its edits before the push',
    );
    assert.equal(phone.get('tasks', existing[2]!), undefined, 'a deleted task is gone at once');
    assert.equal(phone.get('tasks', existing[1]!)!.status, 'completed');
    assert.equal(phone.all('tasks').length, 4 - 1 + 1 + 9 - 1);
    await assert.rejects(phone.push(), /offline/);
    assert.equal(phone.pending().length, 20, 'a failed push keeps every edit');

    // Meanwhile, another device changes what the phone did not touch.
    const { data: remote } = await web.POST('/api/tasks', {
      body: { title: 'Added on the web', due_at: DUE, course: null },
    });
    await web.PATCH('/api/tasks/{id}', {
      params: { path: { id: existing[3]! } },
      body: { title: 'Slides, on the web' },
    });

    // The phone app is closed and opened again: what it saved is what it restores.
    phone = OfflineStore.restore(clientOf(alice, network.fetch), JSON.parse(JSON.stringify(phone)));
    assert.equal(phone.pending().length, 20);

    // Back online: the first push reaches the service but its answer is lost; the phone pushes again.
    network.online = true;
    network.loseNextAnswer = true;
    await assert.rejects(phone.push(), /answer was lost/);
    assert.equal(phone.pending().length, 20);
    const pushesBefore = network.sent.filter((request) => request.path === '/api/sync/commands').length;
    await phone.push();
    const pushes = network.sent.filter((request) => request.path === '/api/sync/commands');
    assert.equal(pushes.length, pushesBefore + 1, 'the 20 edits go in one request');
    assert.equal(pushes.at(-1)!.body, pushes.at(-2)!.body, 'sent again exactly, uuids and all');
    assert.deepEqual(phone.rejected, []);
    assert.equal(phone.pending().length, 0);
    const essayId = phone.resolve(essay);
    assert.match(essayId, /^[0-9a-f-]{36}$/, 'the temp id maps to the real id');
    assert.equal(phone.get('tasks', essay)!.id, essayId, 'the temp id still finds the task');

    // The phone pulls once the feed lists the pushed edits (feed-horizon.ts).
    await changesListed(testDatabase().db, alice.id);
    await phone.pull();
    const server = await serverState(alice, phone.kinds());
    assert.deepEqual(storeState(phone), server, 'the phone holds what the server holds, field by field');
    const tasks = new Map(server.tasks!.map((task) => [String(task.id), task]));
    assert.equal(tasks.size, 4 - 1 + 1 + 9 - 1 + 1);
    assert.equal(tasks.get(essayId)!.status, 'completed', 'made and closed by its temp id, applied once');
    assert.equal(tasks.get(essayId)!.notes, 'outline first');
    assert.equal(tasks.get(existing[3]!)!.title, 'Slides, on the web', 'the remote change came in the pull');
    assert.ok(tasks.has(remote!.id));
    assert.equal([...tasks.values()].filter((task) => task.title === 'Essay').length, 1, 'no edit applied twice');

    // The deck, the card and its review made offline are on the server: the card was reviewed when the phone says.
    const cardId = phone.resolve(card);
    const { data: reviewed } = await web.GET('/api/flashcards/cards/{card_id}', {
      params: { path: { card_id: cardId } },
    });
    assert.equal(reviewed!.deck_id, phone.resolve(deck));
    assert.equal(reviewed!.repetitions, 1);
    assert.equal(new Date(reviewed!.last_reviewed_at!).toISOString(), reviewedAt);

    // The batch sent again (a third time) answers as the first time and changes nothing.
    const batch = JSON.parse(pushes.at(-1)!.body) as { commands: SyncCommand[] };
    const replayed = await web.POST('/api/sync/commands', { body: batch });
    assert.ok(replayed.data!.results.every((result) => result.status === 'ok'));
    assert.deepEqual(await serverState(alice, phone.kinds()), server);
    assert.deepEqual(
      (await web.GET('/api/flashcards/cards/{card_id}', { params: { path: { card_id: cardId } } })).data,
      reviewed,
    );

    // The laptop, loaded in the morning, pulls and sees every change, once the feed lists them (feed-horizon.ts).
    await changesListed(testDatabase().db, alice.id);
    await laptop.pull();
    assert.deepEqual(storeState(laptop), server);
  });

  it('drops an edit the service refuses, with its problem, and applies the others', async () => {
    const alice = await newStudent(service.app);
    const phone = new OfflineStore(clientOf(alice));
    await phone.load();
    const kept = phone.create('task_add', { title: 'Kept', due_at: DUE, course: null });
    phone.edit('task_update', '6f9619ff-8b86-4d01-b42d-00cf4fc964ff', { title: 'Of no task' });
    phone.edit('task_close', kept);
    await phone.push();
    assert.equal(phone.rejected.length, 1);
    assert.equal(phone.rejected[0]!.command.type, 'task_update');
    assert.equal(phone.rejected[0]!.problem.status, 404);
    assert.equal(phone.get('tasks', kept)!.status, 'completed');
    assert.deepEqual(storeState(phone), await serverState(alice, phone.kinds()));
  });

  it('saved in the middle of a full sync, starts it again once restored, and never keeps half a state', async () => {
    const alice = await newStudent(service.app);
    const web = clientOf(alice);
    for (const title of ['One', 'Two', 'Three'])
      await web.POST('/api/tasks', { body: { title, due_at: DUE, course: null } });
    const network = phoneNetwork(checked);
    let answers = 0;
    const phone = new OfflineStore(
      clientOf(alice, async (request) => {
        if (++answers > 2) network.online = false; // the tunnel comes after two pages of one task
        return network.fetch(request);
      }),
    );
    await assert.rejects(phone.load(1), /offline/);
    assert.deepEqual(phone.all('tasks'), [], 'the pages so far are not shown as the state');
    const saved = JSON.parse(JSON.stringify(phone));
    assert.equal(saved.token, null);
    const restored = OfflineStore.restore(web, saved);
    await restored.pull(1);
    assert.deepEqual(
      restored
        .all('tasks')
        .map((task) => task.title)
        .sort(),
      ['One', 'Three', 'Two'],
    );
  });

  it('starts again with * when its token is past the retention', async () => {
    const alice = await newStudent(service.app);
    const web = clientOf(alice);
    await web.POST('/api/tasks', { body: { title: 'Old news', due_at: DUE, course: null } });
    const saved = JSON.parse(JSON.stringify(new OfflineStore(web)));
    // The spec's example of an expired token (January 2026).
    const phone = OfflineStore.restore(web, { ...saved, token: 'WyIyMDI2LTAxLTAxVDAwOjAwOjAwLjAwMFoiLCIxMDAwIiwxXQ' });
    await phone.pull();
    assert.deepEqual(
      phone.all('tasks').map((task) => task.title),
      ['Old news'],
    );
  });
});
