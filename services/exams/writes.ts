// An exam plan's writes with what follows from each, in one student transaction: the linked decks and tasks (the
// student's own only), the event that tells of the change, and the readiness moves it causes. The exams handlers
// parse the request and shape the answer; what a write does lives here.
import type { Db } from '../../db/connect.ts';
import {
  deleteExam,
  findExamForUpdate,
  insertExam,
  ownedDeckIds,
  ownedTaskIds,
  replaceDeckLinks,
  replaceTaskLinks,
  updateExam,
} from '../../db/queries/exams.ts';
import { studentTransaction } from '../../db/student-transaction.ts';
import type { components } from '../../generated/general/types.ts';
import { InputError, type FieldError } from '../../domain/errors.ts';
import { previousAttributes } from '../events/changes.ts';
import { progress } from '../progress/progress.ts';
import { examBody, type Exam } from './exam-body.ts';
import type { Student } from '../../server/auth/principal.ts';

/** The fields an exam.updated event reports the earlier values of (readiness and days_left move without a change). */
const EXAM_EVENT_FIELDS = ['subject', 'exam_date', 'notes', 'deck_ids', 'task_ids'] as const;

/** Inserts an exam with its links, in the caller's transaction; returns it as the API shows it. */
export async function addExam(
  trx: Db,
  student: Student,
  exam: components['schemas']['NewExam'],
  at: Date,
): Promise<Exam> {
  await assertOwnLinks(trx, student.user_id, exam);
  const row = await insertExam(
    trx,
    { user_id: student.user_id, subject: exam.subject, exam_date: exam.exam_date, notes: exam.notes },
    at,
  );
  await replaceDeckLinks(trx, student.user_id, row.id, exam.deck_ids ?? []);
  await replaceTaskLinks(trx, student.user_id, row.id, exam.task_ids ?? []);
  const added = await examBody(trx, student, row, at);
  const created = { type: 'exam.created' as const, studentId: student.user_id, data: { object: added }, at };
  await progress(trx, student, at, { event: () => created });
  return added;
}

/**
 * Changes an exam of the student's (`deck_ids` and `task_ids` replace the linked sets); returns it as the API shows
 * it, or undefined when the student has no exam with this id.
 */
export async function changeExam(
  db: Db,
  student: Student,
  examId: string,
  update: components['schemas']['ExamUpdate'],
  at: Date,
): Promise<Exam | undefined> {
  const { deck_ids, task_ids, ...fields } = update;
  return studentTransaction(db, student.user_id, async (trx) => {
    const current = await findExamForUpdate(trx, student.user_id, examId);
    if (!current) return undefined;
    await assertOwnLinks(trx, student.user_id, update);
    const before = await examBody(trx, student, current, at);
    const row = (await updateExam(trx, student.user_id, examId, fields, at))!;
    if (deck_ids) await replaceDeckLinks(trx, student.user_id, row.id, deck_ids);
    if (task_ids) await replaceTaskLinks(trx, student.user_id, row.id, task_ids);
    const after = await examBody(trx, student, row, at);
    const previous = previousAttributes(before, after, EXAM_EVENT_FIELDS);
    const changed = Object.keys(previous).length > 0;
    const data = { object: after, previous_attributes: previous };
    const updated = { type: 'exam.updated' as const, studentId: student.user_id, data, at };
    await progress(trx, student, at, { event: changed ? () => updated : undefined });
    return after;
  });
}

/** Removes an exam of the student's; false when the student has no exam with this id. */
export async function removeExam(db: Db, student: Student, examId: string, at: Date): Promise<boolean> {
  return studentTransaction(db, student.user_id, async (trx) => {
    const current = await findExamForUpdate(trx, student.user_id, examId);
    if (!current) return false;
    // The event shows the exam as it was, links and readiness included: read before the links go with it.
    const removed = await examBody(trx, student, current, at);
    await deleteExam(trx, student.user_id, examId);
    const deleted = { type: 'exam.deleted' as const, studentId: student.user_id, data: { object: removed }, at };
    await progress(trx, student, at, { event: () => deleted });
    return true;
  });
}

/**
 * A deck or task that is not the student's is refused as invalid input (400), naming each: the exam in the path is
 * fine, the body is not. An unknown id and another student's id get the same answer. Ids come back from PostgreSQL
 * in lower case, and a uuid may be sent in either.
 */
async function assertOwnLinks(
  db: Db,
  userId: string,
  links: { deck_ids?: string[]; task_ids?: string[] },
): Promise<void> {
  const decks = await ownedDeckIds(db, userId, links.deck_ids ?? []);
  const tasks = await ownedTaskIds(db, userId, links.task_ids ?? []);
  const errors: FieldError[] = [
    ...(links.deck_ids ?? []).flatMap((id, i) =>
      decks.has(id.toLowerCase()) ? [] : [{ path: `body.deck_ids.${i}`, message: `names no deck of yours (${id})` }],
    ),
    ...(links.task_ids ?? []).flatMap((id, i) =>
      tasks.has(id.toLowerCase()) ? [] : [{ path: `body.task_ids.${i}`, message: `names no task of yours (${id})` }],
    ),
  ];
  if (errors.length > 0) throw new InputError(errors);
}
