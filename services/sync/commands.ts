// The push of the sync: a phone's queued edits, applied in order, each in its own transaction, through the service
// function its REST operation calls, with that operation's schema for its arguments and its scope. Each command runs
// once per uuid (the stored-response idempotency of server/http/idempotency.ts, keyed by the uuid), so a replayed
// batch answers the first results and changes nothing. A task_add's temp_id is stored beside it, in its transaction,
// so later commands, in the batch or in a later one, name the task by it.
import type { Db } from '../../db/connect.ts';
import { findIdempotencyKey, insertIdempotencyKey } from '../../db/queries/idempotency.ts';
import type { components } from '../../generated/general/types.ts';
import type { GeneralPrincipal } from '../../server/auth/principal.ts';
import { requireScopes } from '../../server/auth/scopes.ts';
import { schemaErrors } from '../../server/contract/component-schemas.ts';
import { idempotently, KEY_LIFETIME_MS } from '../../server/http/idempotency.ts';
import { InputError, NotFoundError } from '../../domain/errors.ts';
import { newTask } from '../tasks/new-task.ts';
import type { Task } from '../tasks/task-body.ts';
import { addTask, changeTask, removeTask } from '../tasks/writes.ts';

type Command = components['schemas']['SyncCommand'];
type Applied = { status: 200; body: { object?: Task } };
export type CommandOutcome = { uuid: string; object?: Task } | { uuid: string; error: unknown };

const TEMP_KEY = 'sync-temp:';
const noTask = () => new NotFoundError('You have no task with this id or temp_id.');

export async function pushCommands(db: Db, principal: GeneralPrincipal, commands: readonly Command[], now: Date) {
  const mapping: Record<string, string> = {};
  const results: CommandOutcome[] = [];
  for (const [index, command] of commands.entries()) {
    try {
      const applied = await apply(db, principal, command, `commands.${index}`, mapping, now);
      results.push({ uuid: command.uuid, ...applied.body });
      if (command.temp_id && command.type === 'task_add' && applied.body.object)
        mapping[command.temp_id] = applied.body.object.id;
    } catch (error) {
      results.push({ uuid: command.uuid, error });
    }
  }
  return { results, temp_id_mapping: mapping };
}

async function apply(
  db: Db,
  principal: GeneralPrincipal,
  command: Command,
  at: string,
  mapping: Readonly<Record<string, string>>,
  now: Date,
): Promise<Applied> {
  requireScopes(principal, ['tasks:write']);
  const { uuid, ...fingerprinted } = command;
  const request = { userId: principal.user_id, key: `sync:${uuid}`, operationId: `sync:${command.type}`, now };
  if (command.type === 'task_add') {
    const args = checked('NewTask', command.args, at) as components['schemas']['NewTask'];
    const task = newTask(args, principal);
    return idempotently(db, { ...request, body: fingerprinted }, async (trx) => {
      const object = await addTask(trx, task, now);
      if (command.temp_id)
        await rememberTempId(trx, principal.user_id, command.temp_id, object.id, `${at}.temp_id`, now);
      return { status: 200 as const, body: { object } };
    });
  }
  if (command.id === undefined) throw new InputError([{ path: `${at}.id`, message: `is required by ${command.type}` }]);
  const target = command.id;
  const changes =
    command.type === 'task_update'
      ? (checked('TaskUpdate', command.args, at) as components['schemas']['TaskUpdate'])
      : ({ status: 'completed' } as const);
  return idempotently(db, { ...request, body: fingerprinted }, async (trx) => {
    const id = await taskIdOf(trx, principal.user_id, target, mapping);
    if (command.type === 'task_delete') {
      if (!(await removeTask(trx, principal, id, now))) throw noTask();
      return { status: 200 as const, body: {} };
    }
    const object = await changeTask(trx, principal, id, changes, now);
    if (!object) throw noTask();
    return { status: 200 as const, body: { object } };
  });
}

/** A command's args, checked against the schema of the REST operation's body. */
function checked(schema: 'NewTask' | 'TaskUpdate', args: unknown, at: string): unknown {
  if (args === undefined) throw new InputError([{ path: `${at}.args`, message: `is required (a ${schema})` }]);
  const errors = schemaErrors(schema, args, `${at}.args`);
  if (errors.length > 0) throw new InputError(errors);
  return args;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A task's id from what a command names it by: a temp_id of this batch, of an earlier one, or the id itself. */
async function taskIdOf(trx: Db, userId: string, name: string, mapping: Readonly<Record<string, string>>) {
  const id = mapping[name] ?? (await storedTempId(trx, userId, name));
  if (id) return id;
  if (!UUID.test(name)) throw noTask();
  return name;
}

async function storedTempId(trx: Db, userId: string, tempId: string): Promise<string | undefined> {
  const stored = await findIdempotencyKey(trx, userId, TEMP_KEY + tempId);
  return (stored?.response_body as { id: string } | undefined)?.id;
}

/** Kept as long as the command's uuid: a retry within that time finds both. */
async function rememberTempId(trx: Db, userId: string, tempId: string, id: string, at: string, now: Date) {
  if (await storedTempId(trx, userId, tempId)) throw new InputError([{ path: at, message: 'already names a task' }]);
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
