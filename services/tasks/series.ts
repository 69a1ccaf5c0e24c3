// The rules of a recurring task's series that writes of tasks share: a rule the series can follow, how many open
// series a student may have, and the occurrence that follows one when it is closed. The series' walk is
// domain/recurrence.ts; here are its checks and its writes, in the caller's student transaction (studentTransaction).
import type { Db } from '../../db/connect.ts';
import { countOpenSeries } from '../../db/queries/schedule.ts';
import { insertNextOccurrence, type TaskRow } from '../../db/queries/tasks.ts';
import {
  assertValidRecurrence,
  InvalidRecurrence,
  nextOccurrence,
  normaliseRecurrence,
} from '../../domain/recurrence.ts';
import { MAX_OPEN_SERIES } from '../../domain/bounds.ts';
import { InputError, LimitError } from '../../domain/errors.ts';

/**
 * The rule a series starting at `seriesStart` follows, in its normal form; a rule the series cannot follow is a 400
 * naming the request's `body.recurrence` (createTask's and updateTask's alike).
 */
export function checkedRecurrence(rule: string, seriesStart: Date, timeZone: string): string {
  try {
    assertValidRecurrence(rule, seriesStart, timeZone);
  } catch (error) {
    if (error instanceof InvalidRecurrence)
      throw new InputError([{ path: 'body.recurrence', message: `is not a valid recurrence rule: ${error.message}` }]);
    throw error;
  }
  return normaliseRecurrence(rule);
}

/**
 * Refuses when the student has more than MAX_OPEN_SERIES open series besides the `counted` ones the transaction has
 * just written. Called inside a student's transaction, whose lock on the student's row makes two requests of one
 * student count in turn, in any process.
 */
export async function assertSeriesRoom(trx: Db, userId: string, counted: 0 | 1): Promise<void> {
  if ((await countOpenSeries(trx, userId)) - counted >= MAX_OPEN_SERIES) {
    const detail = `You have ${MAX_OPEN_SERIES} open recurring tasks, the most a student may have; remove the recurrence of one (PATCH {"recurrence":null}) or delete one first.`;
    throw new LimitError('series_limit_reached', detail, { max: MAX_OPEN_SERIES });
  }
}

/**
 * The occurrence that follows a closed one of a series, inserted; undefined when the series has ended, or when the
 * closed occurrence has its successor already (the row lock and the unique previous_id make it at most one).
 */
export async function insertSuccessor(
  trx: Db,
  student: { user_id: string; time_zone: string },
  closed: TaskRow & { series_starts_at: Date | null },
  at: Date,
): Promise<TaskRow | undefined> {
  if (!closed.recurrence || !closed.series_id || !closed.series_starts_at) return undefined;
  const next = nextOccurrence(closed.recurrence, closed.series_starts_at, closed.due_at, student.time_zone);
  if (!next) return undefined;
  return insertNextOccurrence(
    trx,
    {
      user_id: student.user_id,
      title: closed.title,
      course: closed.course,
      due_at: next,
      notes: closed.notes,
      priority: closed.priority,
      recurrence: closed.recurrence,
      series_id: closed.series_id,
      series_starts_at: closed.series_starts_at,
      previous_id: closed.id,
    },
    at,
  );
}
