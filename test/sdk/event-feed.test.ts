// The SDK's changes-feed iterator against the real service over HTTP: a client that was offline while things
// happened catches up from its stored cursor, loses the network halfway, resumes from the cursor it stored then,
// and ends with every event once: none missed, none repeated. Every response is checked against the spec.
import assert from 'node:assert/strict';
import { createGeneralClient, eventFeed, EventFeedError, type EventFeed, type EventFeedType } from '../../sdk/index.ts';
import { encodeCursor } from '../../server/contract/cursor.ts';
import { changesListed } from '../support/feed-horizon.ts';
import { newStudent, type Student } from '../support/general-app.ts';
import { listeningApp, OUTLASTING_KEEP_ALIVE } from '../support/listening.ts';
import { testDatabase } from '../support/shared-database.ts';
import { contractCheckedFetch } from './checked-fetch.ts';

describe('SDK: eventFeed', () => {
  let service: Awaited<ReturnType<typeof listeningApp>>;
  let fetch: Awaited<ReturnType<typeof contractCheckedFetch>>;

  before(async () => {
    service = await listeningApp({}, OUTLASTING_KEEP_ALIVE);
    fetch = await contractCheckedFetch();
  });
  after(() => service?.close());

  const clientOf = (student: Student, doFetch = fetch) =>
    createGeneralClient({ baseUrl: service.baseUrl, fetch: doFetch, accessToken: student.token });

  async function drain(feed: EventFeed, into: string[]) {
    for await (const event of feed) into.push(event.id);
    return feed.cursor;
  }

  /** Waits until the feed lists every event of the student (feed-horizon.ts), which must be `count`. */
  async function settled(student: Student, count: number) {
    await changesListed(testDatabase().db, student.id);
    const all: string[] = [];
    await drain(eventFeed(clientOf(student)), all);
    assert.equal(all.length, count);
  }

  it('catches up after a time offline, through a lost connection and a resume from the stored cursor, with nothing missed or repeated', async () => {
    const [alice, bob] = await Promise.all([newStudent(service.app), newStudent(service.app)]);
    const app = clientOf(alice);
    const addTask = async (title: string) =>
      (await app.POST('/api/tasks', { body: { title, due_at: '2026-12-01T09:00:00Z', course: 'CHEM 201' } })).data!;

    // Online: the first sync stores its cursor.
    await addTask('before going offline');
    await settled(alice, 1);
    const seen: string[] = [];
    let stored = await drain(eventFeed(app, {}), seen);
    assert.equal(seen.length, 1);
    assert.ok(stored);

    // Offline: the student changes things on another device; another student's changes happen too.
    const other = clientOf(alice);
    const b = (
      await other.POST('/api/tasks', { body: { title: 'b', due_at: '2026-12-02T09:00:00Z', course: 'CHEM 201' } })
    ).data!;
    const c = (
      await other.POST('/api/tasks', { body: { title: 'c', due_at: '2026-12-03T09:00:00Z', course: 'CHEM 201' } })
    ).data!;
    await other.PATCH('/api/tasks/{id}', { params: { path: { id: b.id } }, body: { status: 'completed' } });
    await other.POST('/api/exams', { body: { subject: 'Anatomy', exam_date: '2027-01-20' } });
    await other.DELETE('/api/tasks/{id}', { params: { path: { id: c.id } } });
    await clientOf(bob).POST('/api/tasks', {
      body: { title: 'Bob’s', due_at: '2026-12-01T09:00:00Z', course: 'CHEM 201' },
    });
    await other.POST('/api/tasks', { body: { title: 'd', due_at: '2026-12-04T09:00:00Z', course: 'CHEM 201' } });

    await settled(alice, 7);
    // Back online, two events a page; the network drops on the third request.
    let requests = 0;
    const flaky = async (request: Request) => {
      if (++requests === 3) throw new TypeError('fetch failed');
      return fetch(request);
    };
    const interrupted = eventFeed(clientOf(alice, flaky), { after: stored, pageSize: 2 });
    await assert.rejects(drain(interrupted, seen), /fetch failed/);
    assert.equal(seen.length, 1 + 4, 'two whole pages were handed over before the drop');
    stored = interrupted.cursor;

    // Later, from the stored cursor: the rest, and then nothing more.
    stored = await drain(eventFeed(app, { after: stored, pageSize: 2 }), seen);
    const again: string[] = [];
    await drain(eventFeed(app, { after: stored }), again);
    assert.deepEqual(again, []);

    const everything: string[] = [];
    const types: string[] = [];
    for await (const event of eventFeed(app, { pageSize: 100 })) {
      everything.push(event.id);
      types.push(event.type);
    }
    assert.deepEqual(types, [
      'task.created',
      'task.created',
      'task.created',
      'task.completed',
      'exam.created',
      'task.deleted',
      'task.created',
    ]);
    assert.deepEqual(seen, everything, 'every event once, in commit order');
  });

  it('asks for the kinds given, and tells an expired cursor apart', async () => {
    const alice = await newStudent(service.app);
    const app = clientOf(alice);
    await app.POST('/api/tasks', { body: { title: 'a', due_at: '2026-12-01T09:00:00Z', course: 'CHEM 201' } });
    await app.POST('/api/exams', { body: { subject: 'Anatomy', exam_date: '2027-01-20' } });
    await settled(alice, 2);
    const kinds = async (types: EventFeedType[]) => {
      const found: string[] = [];
      for await (const event of eventFeed(app, { types })) found.push(event.type);
      return found;
    };
    assert.deepEqual(await kinds(['exam.created']), ['exam.created']);
    assert.deepEqual(await kinds(['exam.created', 'task.created']), ['task.created', 'exam.created']);

    const old = encodeCursor([new Date(Date.now() - 40 * 86_400_000).toISOString(), '1', 0]);
    const error = await drain(eventFeed(app, { after: old }), []).catch((e: unknown) => e);
    assert.ok(error instanceof EventFeedError);
    assert.equal(error.status, 410);
    assert.ok(error.expired);
  });
});
