// The sync's kinds beyond tasks and exams: decks and cards paged in a full sync and followed through their events
// (a card's change brings its deck again, a deleted deck takes its cards), the rooms the student is in and the
// profile whole in every answer; what a credential without a kind's scope is shown; and the Sync-Token that the task
// list and the changes feed hand out, which the sync continues from.
import assert from 'node:assert/strict';
import { changesListed } from '../../support/feed-horizon.ts';
import { generalApp, type Student } from '../../support/general-app.ts';
import { pullUntilEqual, serverState, Store, type Obj, type Page } from '../../support/sync-store.ts';

type Ctx = Awaited<ReturnType<typeof generalApp>>;
const DUE = '2030-12-08T09:00:00Z';

async function post(ctx: Ctx, student: Student, path: string, body: object) {
  return (await ctx.api.post(path).set(student.headers).send(body).expect(201)).body as Obj;
}

describe('pullSync’s decks, cards, rooms and profile', () => {
  it('pages decks and cards, follows their changes, and brings the rooms and the profile with the answer that ends the sync', async () => {
    const ctx = await generalApp();
    const [alice, bob] = await Promise.all([ctx.newStudent(), ctx.newStudent()]);
    const deck = await post(ctx, alice, '/api/flashcards/decks', { title: 'Bones' });
    const other = await post(ctx, alice, '/api/flashcards/decks', { title: 'Muscles' });
    const cards = [];
    for (const front of ['Arm', 'Leg', 'Hand'])
      cards.push(await post(ctx, alice, `/api/flashcards/decks/${deck.id}/cards`, { front, back: 'a bone' }));
    const biceps = await post(ctx, alice, `/api/flashcards/decks/${other.id}/cards`, { front: 'Biceps', back: 'm' });
    const room = await post(ctx, bob, '/api/rooms', { title: 'Anatomy group', course: 'Anatomy' });
    const code = (await ctx.api.post(`/api/rooms/${room.id}/join-code`).set(bob.headers).expect(201)).body.code;
    await ctx.api.post('/api/rooms/join').set(alice.headers).send({ code }).expect(200);

    // The full sync's token then lies after these writes, so the changes below are all its answers bring.
    await changesListed(ctx.db, alice.id);
    const phone = new Store();
    await phone.pull(ctx, alice, 2);
    assert.deepEqual(
      phone.pages.map((p) => [p.decks.length, p.cards.length, p.has_more]),
      [
        [2, 0, true],
        [0, 2, true],
        [0, 2, false],
      ],
    );
    for (const page of phone.pages)
      assert.deepEqual(page.kinds, ['tasks', 'decks', 'cards', 'exams', 'rooms', 'profile']);
    // The rooms and the profile come whole with the answer that ends the sync, not with the pages before it.
    assert.deepEqual(
      phone.pages.map((page) => ['rooms' in page, 'profile' in page]),
      [
        [false, false],
        [false, false],
        [true, true],
      ],
    );
    assert.deepEqual(
      phone.rooms.map((r) => [r.id, r.role]),
      [[room.id, 'member']],
    );
    assert.equal(phone.profile!.id, alice.id);
    assert.deepEqual(phone.state(), await serverState(ctx, alice));

    // A card edited, one reviewed, one deleted, a card added; the other deck deleted with its card; the room left.
    await ctx.api
      .patch(`/api/flashcards/cards/${cards[0]!.id}`)
      .set(alice.headers)
      .send({ back: 'humerus' })
      .expect(200);
    await ctx.api
      .post(`/api/flashcards/cards/${cards[1]!.id}/reviews`)
      .set(alice.headers)
      .send({ grade: 4 })
      .expect(201);
    await ctx.api.delete(`/api/flashcards/cards/${cards[2]!.id}`).set(alice.headers).expect(204);
    const added = await post(ctx, alice, `/api/flashcards/decks/${deck.id}/cards`, { front: 'Foot', back: 'tarsals' });
    await ctx.api.delete(`/api/flashcards/decks/${other.id}`).set(alice.headers).expect(204);
    await ctx.api.delete(`/api/rooms/${room.id}/membership`).set(alice.headers).expect(204);

    const before = phone.pages.length;
    await pullUntilEqual(ctx, alice, phone);
    const changes = phone.pages.slice(before);
    assert.deepEqual(
      changes.flatMap((p) => p.deleted.cards),
      [cards[2]!.id],
    );
    assert.deepEqual(
      changes.flatMap((p) => p.deleted.decks),
      [other.id],
    );
    assert.ok(!phone.objects.cards.has(biceps.id), 'the deleted deck took its card');
    assert.ok(changes.flatMap((p) => p.cards).some((card) => card.id === added.id));
    // The deck whose cards changed came again with its counts as they are now.
    const bones = phone.objects.decks.get(deck.id)!;
    assert.deepEqual([bones.card_count, bones.new_count], [3, 2]);
    assert.deepEqual(changes.at(-1)!.rooms, []);
    assert.equal(changes.at(-1)!.profile!.xp, (await serverState(ctx, alice)).profile.xp);
    assert.ok((changes.at(-1)!.profile!.xp as number) > 0, 'the review earned xp');
  });

  it('shows a credential only the kinds it may read: kinds says which, the others are empty', async () => {
    const ctx = await generalApp();
    const alice = await ctx.newStudent({ scopes: ['tasks:read', 'tasks:write', 'decks:write', 'profile:read'] });
    await post(ctx, alice, '/api/tasks', { title: 'mine', due_at: DUE, course: null });
    const deck = await post(ctx, alice, '/api/flashcards/decks', { title: 'Bones' });
    await post(ctx, alice, `/api/flashcards/decks/${deck.id}/cards`, { front: 'Arm', back: 'humerus' });
    const full = (await ctx.api.get('/api/sync').set(alice.headers).expect(200)).body as Page;
    assert.deepEqual(full.kinds, ['tasks', 'profile']);
    assert.deepEqual(
      [full.tasks.length, full.decks, full.cards, full.exams, 'rooms' in full, full.profile!.id],
      [1, [], [], [], false, alice.id],
    );
    await ctx.api.patch(`/api/flashcards/decks/${deck.id}`).set(alice.headers).send({ title: 'x' }).expect(200);
    await post(ctx, alice, `/api/flashcards/decks/${deck.id}/cards`, { front: 'Leg', back: 'femur' });
    const next = await ctx.api.get('/api/sync').set(alice.headers).query({ sync_token: full.sync_token }).expect(200);
    assert.deepEqual([next.body.decks, next.body.cards, next.body.deleted.cards], [[], [], []]);

    const profileOnly = await ctx.newStudent({ scopes: ['profile:read'] });
    const page = (await ctx.api.get('/api/sync').set(profileOnly.headers).expect(200)).body as Page;
    assert.deepEqual([page.kinds, page.tasks, page.profile!.plan], [['profile'], [], 'free']);
    const roomsOnly = await ctx.newStudent({ scopes: ['rooms:read'] });
    const rooms = (await ctx.api.get('/api/sync').set(roomsOnly.headers).expect(200)).body as Page;
    assert.deepEqual([rooms.kinds, rooms.rooms, 'profile' in rooms], [['rooms'], [], false]);
  });

  it('continues from the Sync-Token of the task list’s first page and of a changes feed page', async () => {
    const ctx = await generalApp();
    const alice = await ctx.newStudent();
    const tasks = [];
    for (const title of ['one', 'two', 'three'])
      tasks.push(await post(ctx, alice, '/api/tasks', { title, due_at: DUE, course: null }));
    // The list's token then lies after the tasks' creation, so its answers bring only the change made after it.
    await changesListed(ctx.db, alice.id);
    const first = await ctx.api.get('/api/tasks').set(alice.headers).query({ limit: 2 }).expect(200);
    const token = first.headers['sync-token'] as string;
    assert.ok(token);
    const second = await ctx.api
      .get('/api/tasks')
      .set(alice.headers)
      .query({ limit: 2, cursor: first.body.next_cursor })
      .expect(200);
    assert.equal(second.headers['sync-token'], undefined, 'only the first page of a list hands one');
    // Changed after the list's first page was read: the sync from its token brings it, and nothing listed before.
    await ctx.api.patch(`/api/tasks/${tasks[2]!.id}`).set(alice.headers).send({ title: 'three, changed' }).expect(200);
    const phone = new Store();
    for (const task of [...first.body.data, ...second.body.data]) phone.objects.tasks.set(task.id, task);
    phone.token = token;
    await pullUntilEqual(ctx, alice, phone);
    assert.deepEqual(
      phone.pages.flatMap((page) => page.tasks.map((task) => task.title)),
      ['three, changed'],
    );

    // The feed's page hands its cursor as the token: the sync then answers what came after the page (the page is read
    // once it lists the change above, and the sync once it lists the deletion below).
    await changesListed(ctx.db, alice.id);
    const feed = await ctx.api.get('/api/events').set(alice.headers).query({ limit: 100 }).expect(200);
    assert.equal(feed.headers['sync-token'], feed.body.next_cursor);
    await ctx.api.delete(`/api/tasks/${tasks[0]!.id}`).set(alice.headers).expect(204);
    await changesListed(ctx.db, alice.id);
    const after = await ctx.api
      .get('/api/sync')
      .set(alice.headers)
      .query({ sync_token: feed.headers['sync-token'] })
      .expect(200);
    assert.deepEqual([after.body.tasks, after.body.deleted.tasks], [[], [tasks[0]!.id]]);
  });
});
