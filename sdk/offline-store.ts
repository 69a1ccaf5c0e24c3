// A small offline store over the typed client and the sync (GET /api/sync, POST /api/sync/commands), as a phone keeps
// the student's data: it loads the whole state once, then asks only for what changed; edits made offline are queued
// as commands and shown at once (each list is what the server sent last, with the queued edits played over it), and
// one push sends them; the answer's `temp_id_mapping` gives the objects made offline their real ids.
//
//   const store = new OfflineStore(client);           // or OfflineStore.restore(client, saved)
//   await store.load();                               // sync_token=*, page by page
//   const essay = store.create('task_add', { title: 'Essay', due_at, course: null });   // a temp id, no request
//   store.edit('task_close', essay);                  // later edits name it by that temp id
//   await store.push();                               // one request for up to 100 edits; ids reconciled
//   await store.pull();                               // what changed since, from any device
//   save(JSON.stringify(store));                      // the token, the objects and the queue, to restore later
//
// It is generic over what the pull returns: every list in a page (tasks, decks, cards, exams) is a kind of object kept
// by id, with its `deleted` ids (a deleted deck takes its cards); a list without deleted ids (the rooms) and a field
// that is a single object (the profile) are kept whole, as the answer that ends a sync brings them. A new kind in the
// pull needs no change here. A new command needs one line in EDITS: the kind of object it changes and how it shows
// before the push.
import { randomUUID } from 'node:crypto';
import type { Client } from 'openapi-fetch';
import type { components, paths } from '../generated/general/types.ts';

type Schemas = components['schemas'];
type SyncPage = Schemas['SyncPage'];
type Problem = Schemas['Problem'];
export type SyncCommand = Schemas['SyncCommand'];
export type CommandType = SyncCommand['type'];

/** An object the sync keeps: whole, as its REST operation answers it. */
export type SyncObject = { id: string } & Record<string, unknown>;

/** The kinds the pull answers as lists (`tasks`, `exams`, and whatever the spec adds), typed from the spec. */
export type ListKind = {
  [K in keyof SyncPage]-?: NonNullable<SyncPage[K]> extends ReadonlyArray<{ id: string }> ? K : never;
}[keyof SyncPage];

/** The `args` each command takes: the body of the REST operation it mirrors. */
interface ArgsOf {
  task_add: Schemas['NewTask'];
  task_update: Schemas['TaskUpdate'];
  task_close: undefined;
  task_delete: undefined;
  deck_add: Schemas['NewDeck'];
  card_add: Schemas['NewCard'];
  card_review: Schemas['NewReview'];
}
type Creating = { [T in keyof ArgsOf]: T extends `${string}_add` ? T : never }[keyof ArgsOf];
type Editing = Exclude<keyof ArgsOf, Creating>;

interface Edit {
  /** The kind of object the command changes, whose `object` in the push's answer is one of it. */
  kind: string;
  /** Whether the push's `object` is the changed object itself (a review answers its result instead). */
  answersObject: boolean;
  /** How the edit shows before the push: the object after it, or undefined when it is gone. */
  show: (before: SyncObject | undefined, command: SyncCommand) => SyncObject | undefined;
}

const merged = (before: SyncObject | undefined, args: object | undefined) =>
  before && ({ ...before, ...args } as SyncObject);
const made = (fields: object) => (_: SyncObject | undefined, command: SyncCommand) =>
  ({ ...fields, ...command.args, id: command.temp_id! }) as SyncObject;

/**
 * What each command does before the push. A made object shows with the fields it was given (the server fills in the
 * rest, which the push's answer brings); a review changes the card's schedule, which only the server computes.
 */
const EDITS: Record<CommandType, Edit> = {
  task_add: { kind: 'tasks', answersObject: true, show: made({ status: 'open', completed_at: null }) },
  task_update: { kind: 'tasks', answersObject: true, show: (before, command) => merged(before, command.args) },
  task_close: { kind: 'tasks', answersObject: true, show: (before) => merged(before, { status: 'completed' }) },
  task_delete: { kind: 'tasks', answersObject: false, show: () => undefined },
  deck_add: { kind: 'decks', answersObject: true, show: made({}) },
  card_add: {
    kind: 'cards',
    answersObject: true,
    show: (before, command) => made({ deck_id: command.id })(before, command),
  },
  card_review: { kind: 'cards', answersObject: false, show: (before) => before },
  // Rooms are not among the pull's lists yet: a room joined or left offline shows once the push answers.
  room_join: { kind: 'rooms', answersObject: true, show: (before) => before },
  room_leave: { kind: 'rooms', answersObject: false, show: () => undefined },
};

/** Fields of a page that are about the answer, not objects. */
const ANSWER_FIELDS = new Set(['full_sync', 'kinds', 'has_more', 'sync_token', 'deleted']);
/** Pages one pull reads at most before it stops (and the next pull goes on). */
const MAX_PAGES = 1_000;
const MAX_COMMANDS = 100;

/** A refusal of the sync as the service sent it; `expired` when the token is past the retention. */
export class SyncError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Problem | undefined,
  ) {
    super(problem ? `${status} ${problem.code}: ${problem.detail ?? problem.title}` : `the sync answered ${status}`);
  }

  get expired(): boolean {
    return this.problem?.code === 'sync_token_expired';
  }
}

/** A queued edit the service refused when it was pushed: it is dropped, with the problem that says why. */
export interface RejectedEdit {
  command: SyncCommand;
  problem: Problem;
}

/** What a store saves and restores: `JSON.stringify(store)` writes it. */
export interface SavedStore {
  token: string | null;
  lists: Record<string, SyncObject[]>;
  singles: Record<string, unknown>;
  queue: SyncCommand[];
  ids: Record<string, string>;
}

export class OfflineStore {
  /** What the server sent last, per kind, by id. */
  private lists = new Map<string, Map<string, SyncObject>>();
  /** Fields of the pull that are one object (none today), kept whole. */
  private singles = new Map<string, unknown>();
  /** The pages of a full sync under way: they replace what is kept once its last page came. */
  private incoming: { lists: Map<string, Map<string, SyncObject>>; singles: Map<string, unknown> } | undefined;
  private token: string | null = null;
  private queue: SyncCommand[] = [];
  /** The real id of each temp id the service mapped. */
  private ids = new Map<string, string>();
  private pushing: Promise<void> | undefined;
  /** Edits the service refused at the last push. */
  rejected: RejectedEdit[] = [];

  constructor(private readonly client: Client<paths>) {}

  static restore(client: Client<paths>, saved: SavedStore): OfflineStore {
    const store = new OfflineStore(client);
    store.token = saved.token;
    for (const [kind, objects] of Object.entries(saved.lists))
      store.lists.set(kind, new Map(objects.map((object) => [object.id, object])));
    store.singles = new Map(Object.entries(saved.singles));
    store.queue = [...saved.queue];
    store.ids = new Map(Object.entries(saved.ids));
    return store;
  }

  toJSON(): SavedStore {
    return {
      // Saved in the middle of a full sync, its pages so far are not: the restored store starts it again.
      token: this.incoming ? null : this.token,
      lists: Object.fromEntries([...this.lists].map(([kind, objects]) => [kind, [...objects.values()]])),
      singles: Object.fromEntries(this.singles),
      queue: this.queue,
      ids: Object.fromEntries(this.ids),
    };
  }

  /** The kinds the store holds lists of: what the pull brought. */
  kinds(): string[] {
    return [...this.lists.keys()];
  }

  /** A kind's objects as the student sees them: the server's last, with the queued edits played over them. */
  all(kind: ListKind | (string & {})): SyncObject[] {
    const objects = new Map(this.lists.get(kind));
    for (const command of this.queue) {
      const edit = EDITS[command.type];
      if (edit.kind !== kind) continue;
      const id = this.resolve(command.temp_id ?? command.id ?? '');
      const after = edit.show(objects.get(id), command);
      if (after) objects.set(id, after);
      else objects.delete(id);
    }
    return [...objects.values()];
  }

  /** One object as the student sees it, by its id or the temp id it was made with. */
  get(kind: ListKind | (string & {}), id: string): SyncObject | undefined {
    const real = this.resolve(id);
    return this.all(kind).find((object) => object.id === real);
  }

  /** A field of the pull that is one object, as the server sent it last. */
  single(name: string): unknown {
    return this.singles.get(name);
  }

  /** The edits waiting for a push. */
  pending(): readonly SyncCommand[] {
    return this.queue;
  }

  /** The real id of a temp id the service mapped; any other id as it is. */
  resolve(id: string): string {
    return this.ids.get(id) ?? id;
  }

  /** Queues the making of an object (no request) and answers the temp id that names it until the push maps it. */
  create<T extends Creating>(type: T, args: ArgsOf[T], options: { id?: string } = {}): string {
    const temp_id = `tmp-${randomUUID()}`;
    this.queue.push({
      uuid: randomUUID(),
      type,
      temp_id,
      ...(options.id ? { id: this.resolve(options.id) } : {}),
      args: args as unknown as SyncCommand['args'],
    });
    return temp_id;
  }

  /** Queues an edit of the object `id` names (its id or its temp id); no request. */
  edit<T extends Editing>(type: T, id: string, ...args: ArgsOf[T] extends undefined ? [] : [ArgsOf[T]]): void {
    this.queue.push({
      uuid: randomUUID(),
      type,
      id: this.resolve(id),
      ...(args[0] ? { args: args[0] as unknown as SyncCommand['args'] } : {}),
    });
  }

  /** The full state: `sync_token=*`, page by page; what is kept of each kind is replaced once the last page came. */
  async load(limit = 100): Promise<void> {
    this.token = null;
    this.incoming = undefined;
    await this.pull(limit);
  }

  /**
   * What changed since the kept token (the full state when there is none), applied in order until nothing more is
   * there. A token past the retention starts again with `*`, as the service asks. Queued edits stay queued, shown over
   * what came.
   */
  async pull(limit = 100): Promise<void> {
    for (let pages = 0; pages < MAX_PAGES; pages++) {
      const { data, error, response } = await this.client.GET('/api/sync', {
        params: { query: { sync_token: this.token ?? '*', limit } },
      });
      if (!data) {
        const refusal = new SyncError(response.status, error as Problem | undefined);
        if (refusal.expired && this.token !== null) return this.load(limit);
        throw refusal;
      }
      this.apply(data);
      if (!data.has_more) return;
    }
  }

  /**
   * Sends the queued edits, up to 100 a request, in the order they were made. Each keeps its uuid until it is answered,
   * so a push whose answer was lost is sent again as it was and applies nothing twice. An edit the service refused is
   * dropped into `rejected`; what an applied one answered is kept, under the real ids the service gave.
   */
  async push(): Promise<void> {
    // One push at a time: two at once would send the same edits twice (harmless, by their uuids, but wasted).
    this.pushing ??= this.pushQueue().finally(() => (this.pushing = undefined));
    return this.pushing;
  }

  private async pushQueue(): Promise<void> {
    this.rejected = [];
    while (this.queue.length > 0) {
      const batch = this.queue.slice(0, MAX_COMMANDS);
      const { data, error, response } = await this.client.POST('/api/sync/commands', {
        body: { commands: batch },
      });
      if (!data) throw new SyncError(response.status, error as Problem | undefined);
      for (const [temp, real] of Object.entries(data.temp_id_mapping)) this.ids.set(temp, real);
      const results = new Map(data.results.map((result) => [result.uuid, result]));
      for (const command of batch) {
        const result = results.get(command.uuid);
        if (!result) throw new Error(`the push answered nothing for command ${command.uuid}`);
        if (result.status === 'error') {
          this.rejected.push({ command, problem: result.error! });
          continue;
        }
        // Applied: the object it answered is the server's; an edit that answers none (a deletion) is played as queued.
        // A kind the pull does not bring is not kept: the store holds what the pull can keep up to date.
        const edit = EDITS[command.type];
        const objects = this.lists.get(edit.kind);
        if (!objects) continue;
        const id = this.resolve(command.temp_id ?? command.id!);
        const after =
          edit.answersObject && result.object ? (result.object as SyncObject) : edit.show(objects.get(id), command);
        if (after) objects.set(after.id, after);
        else objects.delete(id);
      }
      // Later edits named objects of this batch by their temp ids: the service knows them, the store now too.
      this.queue = this.queue.slice(batch.length);
    }
  }

  private apply(page: SyncPage): void {
    if (page.full_sync) this.incoming ??= { lists: new Map(), singles: new Map() };
    const into = page.full_sync ? this.incoming! : { lists: this.lists, singles: this.singles };
    const deleted = page.deleted as Record<string, string[] | undefined>;
    for (const [field, value] of Object.entries(page)) {
      if (ANSWER_FIELDS.has(field)) continue;
      if (Array.isArray(value)) {
        // A list without deleted ids (the rooms) comes whole, in the answer that ends a sync: it replaces the kept one.
        if (!(field in deleted)) into.lists.set(field, new Map());
        const objects = this.list(into.lists, field);
        for (const object of value as SyncObject[]) objects.set(object.id, object);
      } else if (value !== null && typeof value === 'object') {
        into.singles.set(field, value);
      }
    }
    for (const [kind, ids] of Object.entries(deleted)) {
      const objects = this.list(into.lists, kind);
      for (const id of ids ?? []) objects.delete(id);
    }
    // A deleted deck takes its cards, which are not listed one by one.
    const goneDecks = new Set(deleted.decks ?? []);
    for (const [id, card] of into.lists.get('cards') ?? [])
      if (goneDecks.has(card.deck_id as string)) into.lists.get('cards')!.delete(id);
    this.token = page.sync_token;
    if (page.full_sync && !page.has_more) {
      ({ lists: this.lists, singles: this.singles } = this.incoming!);
      this.incoming = undefined;
    }
  }

  private list(lists: Map<string, Map<string, SyncObject>>, kind: string): Map<string, SyncObject> {
    let objects = lists.get(kind);
    if (!objects) lists.set(kind, (objects = new Map()));
    return objects;
  }
}
