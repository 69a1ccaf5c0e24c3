// The push of the sync: a phone's queued edits, applied in order, each in its own transaction, through the service
// function its REST operation calls, with that operation's schema for its arguments and its scope. Each command runs
// once per uuid (the stored-response idempotency of server/http/idempotency.ts, keyed by the uuid), so a replayed
// batch answers the first results and changes nothing. A new object's temp_id is stored beside it, in its
// transaction, so later commands, in the batch or in a later one, name the object by it.
import type { Db } from '../../db/connect.ts';
import { findIdempotencyKey, insertIdempotencyKey } from '../../db/queries/idempotency.ts';
import type { Grade } from '../../domain/srs.ts';
import type { components } from '../../generated/general/types.ts';
import type { GeneralPrincipal } from '../../server/auth/principal.ts';
import { requireScopes } from '../../server/auth/scopes.ts';
import { schemaErrors } from '../../server/contract/component-schemas.ts';
import { idempotently, KEY_LIFETIME_MS } from '../../server/http/idempotency.ts';
import { InputError, NotFoundError } from '../../domain/errors.ts';
import { cardBody, reviewResultBody, reviewTime } from '../flashcards/card-body.ts';
import { addDeck } from '../flashcards/new-deck.ts';
import { recordReview } from '../flashcards/reviews.ts';
import { addCard } from '../flashcards/writes.ts';
import { newTask } from '../tasks/new-task.ts';
import { addTask, changeTask, removeTask } from '../tasks/writes.ts';

type Schemas = components['schemas'];
type Command = Schemas['SyncCommand'];
type CommandType = Command['type'];
type SyncObject = NonNullable<Schemas['SyncCommandResults']['results'][number]['object']>;
type Applied = { status: 200; body: { object?: SyncObject } };
export type CommandOutcome = { uuid: string; object?: SyncObject } | { uuid: string; error: unknown };

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
  args?: 'NewTask' | 'TaskUpdate' | 'NewDeck' | 'NewCard' | 'NewReview';
  /** What `id` names; absent for a command that makes an object out of nothing. */
  target?: 'task' | 'deck' | 'card';
  /** It makes an object, which its `temp_id` names. */
  makes?: true;
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
};

const TEMP_KEY = 'sync-temp:';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function pushCommands(db: Db, principal: GeneralPrincipal, commands: readonly Command[], now: Date) {
  // A Map, not an object: a temp_id is the client's text, and `__proto__` or `valueOf` must name nothing but a temp_id.
  const mapping = new Map<string, string>();
  const results: CommandOutcome[] = [];
  for (const [index, command] of commands.entries()) {
    try {
      const applied = await apply(db, principal, command, `commands.${index}`, mapping, now);
      results.push({ uuid: command.uuid, ...applied.body });
      const made = applied.body.object;
      if (command.temp_id && KINDS[command.type].makes && made && 'id' in made) mapping.set(command.temp_id, made.id);
    } catch (error) {
      results.push({ uuid: command.uuid, error });
    }
  }
  return { results, temp_id_mapping: Object.fromEntries(mapping) };
}

async function apply(
  db: Db,
  principal: GeneralPrincipal,
  command: Command,
  at: string,
  mapping: ReadonlyMap<string, string>,
  now: Date,
): Promise<Applied> {
  const kind = KINDS[command.type];
  requireScopes(principal, [kind.scope]);
  const args = kind.args ? checked(kind.args, command.args, at) : undefined;
  const { target } = kind;
  if (target && command.id === undefined)
    throw new InputError([{ path: `${at}.id`, message: `is required by ${command.type}` }]);
  const { uuid, ...fingerprinted } = command;
  const request = {
    userId: principal.user_id,
    key: `sync:${uuid}`,
    operationId: `sync:${command.type}`,
    body: fingerprinted,
    now,
  };
  return idempotently(db, request, async (trx) => {
    const id = target ? await idOf(trx, principal.user_id, command.id!, mapping, target) : '';
    const object = await kind.apply(trx, principal, id, args, now, at);
    if (object === undefined) throw noObject(target ?? 'task');
    if (command.temp_id && kind.makes && object && 'id' in object)
      await rememberTempId(trx, principal.user_id, command.temp_id, object.id, `${at}.temp_id`, now);
    return { status: 200 as const, body: object ? { object } : {} };
  });
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
async function idOf(trx: Db, userId: string, name: string, mapping: ReadonlyMap<string, string>, what: string) {
  const id = mapping.get(name) ?? (await storedTempId(trx, userId, name));
  if (id) return id;
  if (!UUID.test(name)) throw noObject(what);
  return name;
}

async function storedTempId(trx: Db, userId: string, tempId: string): Promise<string | undefined> {
  const stored = await findIdempotencyKey(trx, userId, TEMP_KEY + tempId);
  return (stored?.response_body as { id: string } | undefined)?.id;
}

/** Kept as long as the command's uuid: a retry within that time finds both. */
async function rememberTempId(trx: Db, userId: string, tempId: string, id: string, at: string, now: Date) {
  if (await storedTempId(trx, userId, tempId)) throw new InputError([{ path: at, message: 'already names an object' }]);
  await insertIdempotencyKey(trx, {
    user_id: userId,
    key: TEMP_KEY + tempId,
    request_hash: 'temp_id',
    response_status: 200,
    response_body: { id },
    created_at: now,
    expires_at: new Date(now.getTime() + KEY_LIFETIME_MS),
  });
}
