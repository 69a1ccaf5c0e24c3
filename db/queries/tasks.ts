// A student's tasks. Every query takes the user id and filters on it: another student's task is never found.
import { randomUUID } from 'node:crypto';
import { sql, type Updateable } from 'kysely';
import type { Db } from '../connect.ts';
import { compiledOnce } from '../prepared-statements.ts';
import type { TasksTable } from '../schema.ts';
import { eventRows, insertEvents, type NewEvent } from './events.ts';

/** The columns a task is answered with (series_starts_at and previous_id stay internal). */
/**
 * `status = 'completed'` written into the statement instead of bound: tasks_user_completed_idx is partial on that
 * predicate, and a prepared statement's generic plan cannot use a partial index whose predicate depends on a
 * parameter (bound, the daily loop read every task of the student, three times over).
 */
export const COMPLETED = sql.lit('completed' as const);

export const TASK_COLUMNS = [
  'id',
  'title',
  'course',
  'due_at',
  'status',
  'completed_at',
  'notes',
  'priority',
  'recurrence',
  'series_id',
  'created_at',
  'updated_at',
] as const;

export type TaskRow = Awaited<ReturnType<typeof findTask>> & {};

export interface NewTaskRow {
  /** A fixed id (the demo data's); a random one when absent. */
  id?: string;
  user_id: string;
  title: string;
  course: string | null;
  due_at: Date;
  notes: string | null;
  priority: 'low' | 'normal' | 'high';
  recurrence: string | null;
  series_starts_at: Date | null;
}

/** The row a new task is stored as: open, a recurring one starting its own series (series_id = its id). */
export function newTaskRow(task: NewTaskRow, now: Date) {
  const id = task.id ?? randomUUID();
  return {
    ...task,
    id,
    status: 'open' as const,
    completed_at: null,
    series_id: task.recurrence ? id : null,
    created_at: now,
    updated_at: now,
  };
}

export type NewTaskValues = ReturnType<typeof newTaskRow>;

/** Inserts a task; a recurring one starts its own series (series_id = its id), in the same statement. */
export async function insertTask(db: Db, task: NewTaskRow, now: Date) {
  return insertTaskRow(db, newTaskRow(task, now));
}

/**
 * Inserts a task's row and the outbox events that tell of it in one statement, so that a new task is one round trip
 * and, outside a transaction, needs none of its own. The events are made from the row before it is stored: nothing in
 * it comes from the database.
 *
 * Alone, the statement does not take the student's lock (db/student-transaction.ts), which is there so that a write's
 * later locks come one writer of the student at a time and two writes cannot wait on each other in a cycle. An insert
 * of a task and its events takes no row lock but the foreign keys' key-share of the student's row, which waits for no
 * writer holding the student's lock (FOR NO KEY UPDATE) and holds none of them up, and it reads nothing another write
 * could change under it: it can join no cycle, and ten inserts of one student commit side by side, sharing WAL
 * flushes, instead of one flush each behind the lock. A write that does read (a recurring task counts the student's
 * open series first, a sync push) runs it in a student transaction, whose lock is taken before.
 */
export async function insertTaskRow(db: Db, row: NewTaskValues, events: readonly NewEvent[] = []) {
  const [inserted] = await insertTaskStatement(db, { ...row, events: eventRows(events) });
  return inserted!;
}

/** The columns a new task's row sets: every key of NewTaskValues. */
const NEW_TASK_KEYS = [
  'id',
  'user_id',
  'title',
  'course',
  'due_at',
  'notes',
  'priority',
  'recurrence',
  'series_starts_at',
  'status',
  'completed_at',
  'series_id',
  'created_at',
  'updated_at',
] as const satisfies ReadonlyArray<keyof NewTaskValues>;

// Built and compiled once (db/prepared-statements.ts): building and compiling the insert with its two CTEs cost about
// as much of the service's CPU as sending it.
const insertTaskStatement = compiledOnce(
  [...NEW_TASK_KEYS, 'events'],
  (db: Db, v: NewTaskValues & { events: string }) =>
    db
      .with('task', (qc) =>
        qc
          .insertInto('tasks')
          .values(Object.fromEntries(NEW_TASK_KEYS.map((key) => [key, v[key]])) as NewTaskValues)
          .returning(TASK_COLUMNS),
      )
      .with('outbox', (qc) => insertEvents(qc, v.events))
      .selectFrom('task')
      .selectAll('task'),
);

export async function findTask(db: Db, userId: string, id: string) {
  return db
    .selectFrom('tasks')
    .select(TASK_COLUMNS)
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** The task with what recurrence needs, locked until the transaction ends, so two closes run one after the other. */
export async function findTaskForUpdate(trx: Db, userId: string, id: string) {
  return trx
    .selectFrom('tasks')
    .select([...TASK_COLUMNS, 'series_starts_at'])
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
}

export interface TaskFilters {
  status?: 'open' | 'completed';
  course?: string;
  due_from?: Date;
  due_to?: Date;
}

/**
 * One page (plus one row, to tell whether more follow) by (due_at, id), after the cursor's key when given. Prepared
 * and compiled once per combination of filters (at most 32): it is the general surface's hot read (GET /api/tasks),
 * and Kysely's building and compiling of it cost more of the service's CPU than PostgreSQL's running of it.
 */
export async function listTasks(
  db: Db,
  userId: string,
  filters: TaskFilters,
  after: { at: Date; id: string } | undefined,
  limit: number,
) {
  const values: PageValues = { userId, ...filters, after_at: after?.at, after_id: after?.id, limit: limit + 1 };
  // The statement's index among the 32: one bit per condition it has.
  const shape =
    (filters.status ? 1 : 0) |
    (filters.course ? 2 : 0) |
    (filters.due_from ? 4 : 0) |
    (filters.due_to ? 8 : 0) |
    (after ? 16 : 0);
  return (pageStatements[shape] ??= pageStatement(shape))(db, values);
}

interface PageValues extends TaskFilters {
  userId: string;
  after_at?: Date;
  after_id?: string;
  limit: number;
}

/** A page's conditions, one bit each (listTasks). */
type PageShape = number;

const pageStatements: Array<ReturnType<typeof pageStatement>> = [];

/** The page's statement for one combination of filters: which conditions it has is fixed, their values are bound. */
function pageStatement(shape: PageShape) {
  const has = {
    status: (shape & 1) !== 0,
    course: (shape & 2) !== 0,
    due_from: (shape & 4) !== 0,
    due_to: (shape & 8) !== 0,
    after: (shape & 16) !== 0,
  };
  const filters = (['status', 'course', 'due_from', 'due_to'] as const).filter((name) => has[name]);
  const keys: Array<keyof PageValues> = [
    'userId',
    ...filters,
    ...(has.after ? (['after_at', 'after_id'] as const) : []),
    'limit',
  ];
  return compiledOnce(keys, (db: Db, v: PageValues) => {
    let query = db.selectFrom('tasks').select(TASK_COLUMNS).where('user_id', '=', v.userId);
    if (has.status) query = query.where('status', '=', v.status!);
    if (has.course) query = query.where('course', '=', v.course!);
    if (has.due_from) query = query.where('due_at', '>=', v.due_from!);
    if (has.due_to) query = query.where('due_at', '<', v.due_to!);
    if (has.after)
      query = query.where((eb) => eb(eb.refTuple('due_at', 'id'), '>', eb.tuple(v.after_at!, v.after_id!)));
    return (
      query
        // A first page also says where the changes feed stood in its snapshot (the oldest transaction still running),
        // for the sync token that matches it (the Sync-Token header): in the same statement, so in the same snapshot.
        .$if(!has.after, (q) => q.select(sql<string>`pg_snapshot_xmin(pg_current_snapshot())::text`.as('horizon')))
        .orderBy('due_at')
        .orderBy('id')
        .limit(v.limit)
    );
  });
}

/**
 * Open tasks, earliest due first (overdue ones included): all of them, or those due before `dueBefore`, or the
 * first `limit`. The daily loop and the tutor read a student's open work through this.
 */
export async function listOpenTasks(db: Db, userId: string, options: { dueBefore?: Date; limit?: number } = {}) {
  return openTasks(db, userId, options).select(['id', 'title', 'course', 'due_at']).execute();
}

/** The query of listOpenTasks without its columns, to select what a caller needs or to embed in one statement. */
export function openTasks(db: Db, userId: string, options: { dueBefore?: Date; limit?: number } = {}) {
  let query = db.selectFrom('tasks').where('user_id', '=', userId).where('status', '=', 'open');
  if (options.dueBefore) query = query.where('due_at', '<', options.dueBefore);
  query = query.orderBy('due_at').orderBy('id');
  if (options.limit !== undefined) query = query.limit(options.limit);
  return query;
}

export type TaskChanges = Omit<Updateable<TasksTable>, 'id' | 'user_id' | 'created_at' | 'previous_id'>;

export async function updateTask(trx: Db, userId: string, id: string, changes: TaskChanges) {
  return trx
    .updateTable('tasks')
    .set(changes)
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .returning([...TASK_COLUMNS, 'series_starts_at'])
    .executeTakeFirstOrThrow();
}

/**
 * Inserts the occurrence that follows `previousId`, unless one exists already (previous_id is unique): closing an
 * occurrence twice, or in two racing requests, creates one successor.
 */
export async function insertNextOccurrence(
  trx: Db,
  task: NewTaskRow & { series_id: string; previous_id: string },
  now: Date,
) {
  return trx
    .insertInto('tasks')
    .values({ ...task, created_at: now, updated_at: now })
    .onConflict((oc) => oc.column('previous_id').doNothing())
    .returning(TASK_COLUMNS)
    .executeTakeFirst();
}

/** The deleted task as it was, or undefined when the student has no task with this id. */
export async function deleteTask(db: Db, userId: string, id: string) {
  return db
    .deleteFrom('tasks')
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .returning(TASK_COLUMNS)
    .executeTakeFirst();
}
