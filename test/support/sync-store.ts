// A client of the sync, as a phone keeps the student's data: the objects by id and the token, applied page by page,
// and the server's state as the REST lists answer it, to compare with.
import assert from 'node:assert/strict';
import { eventually } from './export-account.ts';
import type { generalApp, Student } from './general-app.ts';

type Ctx = Awaited<ReturnType<typeof generalApp>>;
export type Obj = { id: string } & Record<string, unknown>;
export interface Page {
  full_sync: boolean;
  tasks: Obj[];
  exams: Obj[];
  deleted: { tasks: string[]; exams: string[] };
  has_more: boolean;
  sync_token: string;
}
const KINDS = ['tasks', 'exams'] as const;

/** What a phone keeps: the objects by id, and the token to ask with next. */
export class Store {
  objects = emptyObjects();
  token = '*';
  pages: Page[] = [];
  /** The pages of a full sync under way: they replace what is kept once its last page came. */
  private incoming: ReturnType<typeof emptyObjects> | undefined;

  /** Pulls until the answer has no more. */
  async pull(ctx: Ctx, student: Student, limit = 100) {
    for (let asked = 0; asked < 100; asked++) {
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
    this.token = page.sync_token;
    if (page.full_sync && !page.has_more) [this.objects, this.incoming] = [this.incoming!, undefined];
  }

  state() {
    return { tasks: sorted(this.objects.tasks.values()), exams: sorted(this.objects.exams.values()) };
  }
}

const emptyObjects = () => ({ tasks: new Map<string, Obj>(), exams: new Map<string, Obj>() });
const sorted = (objects: Iterable<Obj>) => [...objects].sort((a, b) => a.id.localeCompare(b.id));

/** The student's state as the REST lists answer it. */
export async function serverState(ctx: Ctx, student: Student) {
  const list = async (path: string) =>
    (await ctx.api.get(path).set(student.headers).query({ limit: 100 }).expect(200)).body.data as Obj[];
  return { tasks: sorted(await list('/api/tasks')), exams: sorted(await list('/api/exams')) };
}

/**
 * Pulls until the store equals the server: on PostgreSQL a change is listed once every transaction of the whole
 * server that began before it has ended (other test files' too), so the pull right after a write may not have it yet.
 */
export async function pullUntilEqual(ctx: Ctx, student: Student, store: Store) {
  const expected = await serverState(ctx, student);
  await eventually(
    async () => {
      await store.pull(ctx, student);
      return store.state();
    },
    (state) => JSON.stringify(state) === JSON.stringify(expected),
  );
  assert.deepEqual(store.state(), expected);
}
