// A client of the sync, as a phone keeps the student's data: the objects by id and the token, applied page by page,
// and the server's state as the REST lists answer it, to compare with.
import assert from 'node:assert/strict';
import { changesListed } from './feed-horizon.ts';
import type { generalApp, Student } from './general-app.ts';

type Ctx = Awaited<ReturnType<typeof generalApp>>;
export type Obj = { id: string } & Record<string, unknown>;
export interface Page {
  full_sync: boolean;
  kinds: string[];
  tasks: Obj[];
  decks: Obj[];
  cards: Obj[];
  exams: Obj[];
  rooms?: Obj[];
  profile?: Obj;
  deleted: { tasks: string[]; decks: string[]; cards: string[]; exams: string[] };
  has_more: boolean;
  sync_token: string;
}
const KINDS = ['tasks', 'decks', 'cards', 'exams'] as const;

/** What a phone keeps: the objects by id, the rooms and the profile as the last answer gave them, and the token. */
export class Store {
  objects = emptyObjects();
  rooms: Obj[] = [];
  profile: Obj | undefined;
  token = '*';
  pages: Page[] = [];
  /** The pages of a full sync under way: they replace what is kept once its last page came. */
  private incoming: ReturnType<typeof emptyObjects> | undefined;

  /** Pulls until the answer has no more. */
  async pull(ctx: Ctx, student: Student, limit = 100) {
    for (let asked = 0; asked < 1000; asked++) {
      const query = { sync_token: this.token, limit };
      this.apply((await ctx.api.get('/api/sync').set(student.headers).query(query).expect(200)).body as Page);
      if (!this.pages.at(-1)!.has_more) return;
    }
    throw new Error('the sync did not end');
  }

  apply(page: Page) {
    this.pages.push(page);
    if (page.full_sync) this.incoming ??= emptyObjects();
    const into = page.full_sync ? this.incoming! : this.objects;
    for (const kind of KINDS) {
      for (const object of page[kind]) into[kind].set(object.id, object);
      for (const id of page.deleted[kind]) into[kind].delete(id);
    }
    // A deleted deck takes its cards with it (the spec's SyncPage.deleted).
    const goneDecks = new Set(page.deleted.decks);
    for (const [id, card] of into.cards) if (goneDecks.has(card.deck_id as string)) into.cards.delete(id);
    // The rooms and the profile come whole in the answer that ends a sync.
    if (page.rooms) this.rooms = page.rooms;
    if (page.profile) this.profile = page.profile;
    this.token = page.sync_token;
    if (page.full_sync && !page.has_more) [this.objects, this.incoming] = [this.incoming!, undefined];
  }

  state() {
    return {
      tasks: sorted(this.objects.tasks.values()),
      decks: sorted(this.objects.decks.values()),
      cards: sorted(this.objects.cards.values()),
      exams: sorted(this.objects.exams.values()),
      rooms: sorted(this.rooms),
      profile: this.profile,
    };
  }
}

const emptyObjects = () => ({
  tasks: new Map<string, Obj>(),
  decks: new Map<string, Obj>(),
  cards: new Map<string, Obj>(),
  exams: new Map<string, Obj>(),
});
const sorted = (objects: Iterable<Obj>) => [...objects].sort((a, b) => a.id.localeCompare(b.id));

/** The student's state as the REST operations answer it (a credential that reads every kind). */
export async function serverState(ctx: Ctx, student: Student) {
  const all = async (path: string) => {
    const items: Obj[] = [];
    for (let cursor: string | undefined, i = 0; i === 0 || cursor; i++) {
      const query = cursor ? { limit: 100, cursor } : { limit: 100 };
      const body = (await ctx.api.get(path).set(student.headers).query(query).expect(200)).body;
      items.push(...(body.data as Obj[]));
      cursor = body.next_cursor ?? undefined;
    }
    return items;
  };
  const decks = await all('/api/flashcards/decks');
  const cards = [];
  for (const deck of decks) cards.push(...(await all(`/api/flashcards/decks/${deck.id}/cards`)));
  const rooms = (await ctx.api.get('/api/rooms').set(student.headers).expect(200)).body.data as Obj[];
  const profile = (await ctx.api.get('/api/users/me').set(student.headers).expect(200)).body as Obj;
  return {
    tasks: sorted(await all('/api/tasks')),
    decks: sorted(decks),
    cards: sorted(cards),
    exams: sorted(await all('/api/exams')),
    rooms: sorted(rooms),
    profile,
  };
}

/** Pulls once the feed lists every change the student made (feed-horizon.ts); the store must then equal the server. */
export async function pullUntilEqual(ctx: Ctx, student: Student, store: Store) {
  await changesListed(ctx.db, student.id);
  await store.pull(ctx, student);
  assert.deepEqual(store.state(), await serverState(ctx, student));
}
