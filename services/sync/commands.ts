// The push of the sync: a phone's queued edits, applied in order, through the service function its REST operation
// calls, with that operation's schema for its arguments and its scope. Each command runs once per uuid: its result is
// stored under the uuid in the transaction that applies it (the stored responses of server/http/idempotency.ts, with
// their lifetime), so a replayed batch answers the first results and changes nothing. A new object's temp_id is stored
// beside it, in its transaction, so later commands, in the batch or in a later one, name the object by it.
//
// A batch pays per command: every command not applied before counts one request against the account's limits, as
// its REST operation would, taken before any is applied (`CommandQuota`); the commands past what the limits leave
// answer the quota's refusal and change nothing. A replayed command costs nothing.
//
// What a batch shares is read once: the expired keys are forgotten and every uuid and temp_id the batch names is
// looked up in one statement. A batch whose commands all apply is then one transaction, its results stored in one
// statement at its end; otherwise (a command refused) each command runs in a transaction of its own, which stores
// its result and temp_id in one statement more than its REST operation's.
import type { Db } from '../../db/connect.ts';
import {
  findIdempotencyKey,
  insertIdempotencyKeysIfAbsent,
  purgeAndFindIdempotencyKeys,
  type KeptResponse,
  type StoredResponse,
} from '../../db/queries/idempotency.ts';
import { retriedTransaction, studentTransaction } from '../../db/student-transaction.ts';
import type { Grade } from '../../domain/srs.ts';
import type { components } from '../../generated/general/types.ts';
import type { GeneralPrincipal } from '../../server/auth/principal.ts';
import { requireScopes } from '../../server/auth/scopes.ts';
import { schemaErrors } from '../../server/contract/component-schemas.ts';
import { fingerprint, KEY_LIFETIME_MS } from '../../server/http/idempotency.ts';
import { ConflictError, InputError, NotFoundError } from '../../domain/errors.ts';
import { cardBody, reviewResultBody, reviewTime } from '../flashcards/card-body.ts';
import { addDeck } from '../flashcards/new-deck.ts';
import { recordReview } from '../flashcards/reviews.ts';
import { addCard } from '../flashcards/writes.ts';
import { joinByCode, leave } from '../rooms/writes.ts';
import { newTask } from '../tasks/new-task.ts';
import { addTask, changeTask, removeTask } from '../tasks/writes.ts';

type Schemas = components['schemas'];
type Command = Schemas['SyncCommand'];
type CommandType = Command['type'];
type SyncObject = NonNullable<Schemas['SyncCommandResults']['results'][number]['object']>;
type Applied = { object?: SyncObject };
export type CommandOutcome = { uuid: string; object?: SyncObject } | { uuid: string; error: unknown };

/**
 * The account's request limits, for the commands of one batch: `take` counts `count` commands before any is applied
 * and answers how many may be (the first `granted` of them, in order) and what the others answer.
 */
export interface CommandQuota {
  take(count: number): Promise<{ granted: number; refusal?: unknown }>;
}

/** A command that applies to an object, as its REST operation does: the object's id resolved, its args checked. */
type Apply = (
  trx: Db,
  principal: GeneralPrincipal,
  id: string,
  args: any,
  at: Date,
  path: string,
) => Promise<SyncObject | null | undefined>;

interface CommandKind {
  /** The scope of the REST operation it mirrors. */
  scope: Schemas['Scope'];
  /** The schema of that operation's body, when it takes one. */
  args?: 'NewTask' | 'TaskUpdate' | 'NewDeck' | 'NewCard' | 'NewReview' | 'RoomJoin';
  /** What `id` names; absent for a command that makes an object out of nothing. */
  target?: 'task' | 'deck' | 'card' | 'room';
  /** It makes (or, for a room joined, gains) an object, which its `temp_id` names. */
  makes?: true;
  /**
   * Its service takes its locks itself, in its own order: a room's writes lock the room before the student
   * (services/rooms/writes.ts), so the command's transaction must not take the student's lock first.
   */
  locksItself?: true;
  /** Undefined (the REST operation's 404) when the student has no such object; null when it answers nothing. */
  apply: Apply;
}

const KINDS: Record<CommandType, CommandKind> = {
  task_add: {
    scope: 'tasks:write',
    args: 'NewTask',
    makes: true,
    apply: (trx, principal, _id, args, at) => addTask(trx, newTask(args, principal), at),
  },
  task_update: { scope: 'tasks:write', args: 'TaskUpdate', target: 'task', apply: changeTask },
  task_close: {
    scope: 'tasks:write',
    target: 'task',
    apply: (trx, principal, id, _args, at) => changeTask(trx, principal, id, { status: 'completed' }, at),
  },
  task_delete: {
    scope: 'tasks:write',
    target: 'task',
    apply: async (trx, principal, id, _args, at) => ((await removeTask(trx, principal, id, at)) ? null : undefined),
  },
  deck_add: {
    scope: 'decks:write',
    args: 'NewDeck',
    makes: true,
    apply: (trx, principal, _id, args, at) => addDeck(trx, principal, args, at),
  },
  card_add: {
    scope: 'decks:write',
    args: 'NewCard',
    target: 'deck',
    makes: true,
    apply: async (trx, principal, deckId, args, at) => {
      const row = await addCard(trx, principal, deckId, args, at);
      return row && cardBody(row);
    },
  },
  card_review: {
    scope: 'decks:write',
    args: 'NewReview',
    target: 'card',
    apply: async (trx, principal, cardId, args: Schemas['NewReview'], at, path) => {
      const reviewedAt = reviewTime(args.reviewed_at, at, `${path}.args.reviewed_at`);
      const recorded = await recordReview(
        trx,
        principal,
        { card_id: cardId, grade: args.grade as Grade, reviewedAt },
        at,
      );
      return recorded && reviewResultBody(recorded);
    },
  },
  room_join: {
    scope: 'rooms:write',
    args: 'RoomJoin',
    makes: true,
    locksItself: true,
    apply: (trx, principal, _id, args: Schemas['RoomJoin'], at) => joinByCode(trx, principal.user_id, args.code, at),
  },
  room_leave: {
    scope: 'rooms:write',
    target: 'room',
    locksItself: true,
    apply: async (trx, principal, roomId, _args, at) => {
      await leave(trx, principal.user_id, roomId, at);
      return null;
    },
  },
};

const TEMP_KEY = 'sync-temp:';
const UUID_KEY = 'sync:';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What a batch knows before it applies anything: the stored results and temp_ids it names, and its new objects. */
interface Batch {
  principal: GeneralPrincipal;
  now: Date;
  /**
   * Stored responses by key (`sync:<uuid>`, `sync-temp:<temp_id>`): as they were when the batch began, and the results
   * of its commands applied since (a uuid sent twice in one batch answers the first result the second time).
   */
  stored: Map<string, KeptResponse>;
  /** The temp_ids of this batch's new objects. A Map: a temp_id is the client's text, `__proto__` included. */
  mapping: Map<string, string>;
}

export async function pushCommands(
  db: Db,
  principal: GeneralPrincipal,
  commands: readonly Command[],
  now: Date,
  quota?: CommandQuota,
) {
  const keys = commands.flatMap((command) => [
    UUID_KEY + command.uuid,
    ...(command.temp_id ? [TEMP_KEY + command.temp_id] : []),
    ...(command.id ? [TEMP_KEY + command.id] : []),
  ]);
  const stored = await purgeAndFindIdempotencyKeys(db, principal.user_id, keys, now);
  // Every uuid not applied before counts once; the first `granted` of them, in the batch's order, may run.
  const fresh = [...new Set(commands.map((command) => command.uuid))].filter((uuid) => !stored.has(UUID_KEY + uuid));
  const { granted, refusal } = quota && fresh.length > 0 ? await quota.take(fresh.length) : { granted: fresh.length };
  const paid = new Set(fresh.slice(0, granted));

  /** The batch in order: each command in a transaction of its own, or all of them in `together`'s, which any refusal ends. */
  const run = async (together?: Together) => {
    const batch: Batch = { principal, now, stored: new Map(stored), mapping: new Map() };
    const results: CommandOutcome[] = [];
    for (const [index, command] of commands.entries()) {
      if (!stored.has(UUID_KEY + command.uuid) && !paid.has(command.uuid)) {
        results.push({ uuid: command.uuid, error: refusal });
        continue;
      }
      try {
        const applied = await apply(db, batch, command, `commands.${index}`, together);
        results.push({ uuid: command.uuid, ...applied });
        const made = applied.object;
        if (command.temp_id && KINDS[command.type].makes && made && 'id' in made)
          batch.mapping.set(command.temp_id, made.id);
      } catch (error) {
        if (together) throw error;
        results.push({ uuid: command.uuid, error });
      }
    }
    return { results, temp_id_mapping: Object.fromEntries(batch.mapping) };
  };

  // A batch of edits that all apply, the usual case, is one transaction: one student lock, one commit and one insert
  // of the results for all, instead of a transaction per command. Any refusal (or the same batch stored meanwhile)
  // rolls it back, and the batch runs again one transaction per command, where a refused command answers its problem
  // and the others are applied all the same. Not with a room command: a room's writes lock the room before the
  // student (services/rooms/writes.ts), and this transaction takes the student's lock first.
  if (paid.size > 1 && commands.every((command) => !KINDS[command.type].locksItself)) {
    try {
      return await studentTransaction(db, principal.user_id, async (trx) => {
        const together: Together = { trx, rows: [] };
        const outcome = await run(together);
        if (together.rows.length > 0) {
          const inserted = await insertIdempotencyKeysIfAbsent(trx, together.rows);
          if (inserted.size < together.rows.length) throw new AppliedMeanwhile();
        }
        return outcome;
      });
    } catch {
      // Rolled back: one transaction per command below says what each command answers.
    }
  }
  return run();
}

/** The one transaction of a batch applied together, and the results and temp_ids it stores at its end. */
interface Together {
  trx: Db;
  rows: StoredResponse[];
}

/** Thrown inside a command's transaction when its uuid was stored meanwhile (the same batch sent twice at once). */
class AppliedMeanwhile extends Error {}

async function apply(db: Db, batch: Batch, command: Command, at: string, together?: Together): Promise<Applied> {
  const { principal, now } = batch;
  const kind = KINDS[command.type];
  requireScopes(principal, [kind.scope]);
  const args = kind.args ? checked(kind.args, command.args, at) : undefined;
  const { target } = kind;
  if (target && command.id === undefined)
    throw new InputError([{ path: `${at}.id`, message: `is required by ${command.type}` }]);
  const { uuid, ...fingerprinted } = command;
  const uuidKey = UUID_KEY + uuid;
  const hash = fingerprint(`sync:${command.type}`, fingerprinted);
  const known = batch.stored.get(uuidKey);
  if (known) return replay(known, hash);
  const tempKey = command.temp_id && kind.makes ? TEMP_KEY + command.temp_id : undefined;
  if (tempKey && (batch.mapping.has(command.temp_id!) || batch.stored.has(tempKey)))
    throw new InputError([{ path: `${at}.temp_id`, message: 'already names an object' }]);
  const userId = principal.user_id;
  const transaction = <T>(work: (trx: Db) => Promise<T>) =>
    together
      ? work(together.trx)
      : kind.locksItself
        ? retriedTransaction(db, work)
        : studentTransaction(db, userId, work);
  try {
    const body = await transaction(async (trx) => {
      const id = target ? idOf(batch, command.id!, target) : '';
      const object = await kind.apply(trx, principal, id, args, now, at);
      if (object === undefined) throw noObject(target ?? 'task');
      const body: Applied = object ? { object } : {};
      const expires_at = new Date(now.getTime() + KEY_LIFETIME_MS);
      const kept = (key: string, request_hash: string, response_body: unknown): StoredResponse => ({
        user_id: userId,
        key,
        request_hash,
        response_status: 200,
        response_body,
        created_at: now,
        expires_at,
      });
      const rows = [kept(uuidKey, hash, body)];
      // Kept as long as the command's uuid: a retry within that time finds both.
      if (tempKey && object && 'id' in object) rows.push(kept(tempKey, 'temp_id', { id: object.id }));
      // Applied together: stored with the batch's others at the end of its transaction.
      if (together) {
        together.rows.push(...rows);
        return body;
      }
      const inserted = await insertIdempotencyKeysIfAbsent(trx, rows);
      if (!inserted.has(uuidKey)) throw new AppliedMeanwhile();
      if (rows.length > 1 && !inserted.has(tempKey!))
        throw new InputError([{ path: `${at}.temp_id`, message: 'already names an object' }]);
      return body;
    });
    batch.stored.set(uuidKey, { key: uuidKey, request_hash: hash, response_status: 200, response_body: body });
    return body;
  } catch (error) {
    if (together || !(error instanceof AppliedMeanwhile)) throw error;
    // Rolled back: the command's first run answers for it.
    return replay((await findIdempotencyKey(db, userId, uuidKey))!, hash);
  }
}

/** A command whose uuid was applied before: its first result, if it is the same command. */
function replay(stored: Pick<KeptResponse, 'request_hash' | 'response_body'>, hash: string): Applied {
  if (stored.request_hash !== hash)
    throw new ConflictError(
      'idempotency_key_reused',
      'This uuid was sent with a different command; make a new uuid for a new edit.',
    );
  return stored.response_body as Applied;
}

/** A command's args, checked against the schema of the REST operation's body. */
function checked(schema: NonNullable<CommandKind['args']>, args: unknown, at: string): unknown {
  if (args === undefined) throw new InputError([{ path: `${at}.args`, message: `is required (a ${schema})` }]);
  const errors = schemaErrors(schema, args, `${at}.args`);
  if (errors.length > 0) throw new InputError(errors);
  return args;
}

const noObject = (what: string) => new NotFoundError(`You have no ${what} with this id or temp_id.`);

/** An object's id from what a command names it by: a temp_id of this batch, of an earlier one, or the id itself. */
function idOf(batch: Batch, name: string, what: string): string {
  const id =
    batch.mapping.get(name) ?? (batch.stored.get(TEMP_KEY + name)?.response_body as { id: string } | undefined)?.id;
  if (id) return id;
  if (!UUID.test(name)) throw noObject(what);
  return name;
}
