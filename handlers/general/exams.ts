// Exam plans: an exam per subject and date, the decks and tasks that prepare for it, and the readiness for it
// (readiness.ts), computed at read time from the student's cards, tasks and study days.
import { studentTransaction } from '../../db/student-transaction.ts';
import type { Db } from '../../db/connect.ts';
import {
  deleteExam as deleteExamRow,
  findExam,
  findExamForUpdate,
  insertExam,
  listExams as listExamRows,
  ownedDeckIds,
  ownedTaskIds,
  replaceDeckLinks,
  replaceTaskLinks,
  updateExam as updateExamRow,
  type ExamRow,
} from '../../db/queries/exams.ts';
import { previousAttributes } from '../../services/events/changes.ts';
import { emitEvent } from '../../services/events/emit.ts';
import { readinessMoved } from '../../services/events/readiness.ts';
import { streamReadiness } from '../../services/events/readiness-stream.ts';
import type { GeneralPrincipal } from '../../server/auth/principal.ts';
import { problems, type FieldError } from '../../server/http/problems.ts';
import { dateIdCursor, page } from '../../server/contract/cursor.ts';
import { examPreparation } from '../../services/exam-preparation.ts';
import { idempotently } from '../../server/http/idempotency.ts';
import { daysBetween, localDate } from '../../domain/student-day.ts';
import type { GeneralHandlers, Schemas } from './types.ts';

const noExam = () => problems.notFound('You have no exam with this id.');

export const listExams: GeneralHandlers['listExams'] = async ({ query, principal }, { db, now }) => {
  const rows = await listExamRows(db, principal.user_id, { limit: query.limit, after: dateIdCursor(query.cursor) });
  const result = page(rows, query.limit, (row) => [row.exam_date, row.id]);
  return { status: 200, body: { ...result, data: await examBodies(db, principal, result.data, now()) } };
};

export const createExam: GeneralHandlers['createExam'] = async ({ headers, body, principal }, { db, now }) => {
  const at = now();
  return idempotently(db, { userId: principal.user_id, key: headers['Idempotency-Key'], operationId: 'createExam', body, now: at }, async (trx) => {
    await assertOwnLinks(trx, principal.user_id, body);
    const row = await insertExam(trx, { user_id: principal.user_id, subject: body.subject, exam_date: body.exam_date, notes: body.notes }, at);
    await replaceDeckLinks(trx, principal.user_id, row.id, body.deck_ids ?? []);
    await replaceTaskLinks(trx, principal.user_id, row.id, body.task_ids ?? []);
    const [exam] = await examBodies(trx, principal, [row], at);
    await emitEvent(trx, { type: 'exam.created', studentId: principal.user_id, data: { object: exam! }, at });
    await readinessMoved(trx, principal, at);
    return { status: 201 as const, body: exam! };
  });
};

export const getExam: GeneralHandlers['getExam'] = async ({ path, principal }, { db, now }) => {
  const row = await findExam(db, principal.user_id, path.exam_id);
  if (!row) throw noExam();
  const [exam] = await examBodies(db, principal, [row], now());
  return { status: 200, body: exam! };
};

export const updateExam: GeneralHandlers['updateExam'] = async ({ path, body, principal }, { db, now }) => {
  const at = now();
  const { deck_ids, task_ids, ...fields } = body;
  return studentTransaction(db, principal.user_id, async (trx) => {
    const current = await findExamForUpdate(trx, principal.user_id, path.exam_id);
    if (!current) throw noExam();
    await assertOwnLinks(trx, principal.user_id, body);
    const [before] = await examBodies(trx, principal, [current], at);
    const row = (await updateExamRow(trx, principal.user_id, path.exam_id, fields, at))!;
    if (deck_ids) await replaceDeckLinks(trx, principal.user_id, row.id, deck_ids);
    if (task_ids) await replaceTaskLinks(trx, principal.user_id, row.id, task_ids);
    const [exam] = await examBodies(trx, principal, [row], at);
    const previous = previousAttributes(before!, exam!, EXAM_EVENT_FIELDS);
    if (Object.keys(previous).length > 0) await emitEvent(trx, { type: 'exam.updated', studentId: principal.user_id, data: { object: exam!, previous_attributes: previous }, at });
    await readinessMoved(trx, principal, at);
    return { status: 200 as const, body: exam! };
  });
};

export const deleteExam: GeneralHandlers['deleteExam'] = async ({ path, principal }, { db, now }) => {
  const at = now();
  await studentTransaction(db, principal.user_id, async (trx) => {
    const current = await findExamForUpdate(trx, principal.user_id, path.exam_id);
    if (!current) throw noExam();
    const [exam] = await examBodies(trx, principal, [current], at);
    await deleteExamRow(trx, principal.user_id, path.exam_id);
    await emitEvent(trx, { type: 'exam.deleted', studentId: principal.user_id, data: { object: exam! }, at });
    await readinessMoved(trx, principal, at);
  });
  return { status: 204, body: undefined };
};

/** The readiness of every upcoming exam, live (services/events/readiness-stream.ts). */
export const streamExamReadiness: GeneralHandlers['streamExamReadiness'] = async ({ headers, principal }, { db, now, lifecycle, streams }, { req, res }) => {
  if (!streams) throw new Error('the general surface serves streams with its notifications');
  await streamReadiness({
    req,
    res,
    db,
    groups: streams.readiness,
    openStreams: streams.open,
    settings: streams.settings,
    student: principal,
    lastEventId: headers['Last-Event-ID'],
    now,
    streamsEnd: lifecycle.streamsEnd,
    onError: (error) => req.log.warn({ err: error }, 'the readiness stream could not read the moves; it ends, the client reconnects'),
  });
};

/** The fields an exam.updated event reports the earlier values of (readiness and days_left move without a change). */
const EXAM_EVENT_FIELDS = ['subject', 'exam_date', 'notes', 'deck_ids', 'task_ids'] as const;

/**
 * A deck or task that is not the student's is refused as invalid input (400), naming each: the exam in the path is
 * fine, the body is not. An unknown id and another student's id get the same answer. Ids come back from PostgreSQL
 * in lower case, and a uuid may be sent in either.
 */
async function assertOwnLinks(db: Db, userId: string, body: { deck_ids?: string[]; task_ids?: string[] }): Promise<void> {
  const decks = await ownedDeckIds(db, userId, body.deck_ids ?? []);
  const tasks = await ownedTaskIds(db, userId, body.task_ids ?? []);
  const errors: FieldError[] = [
    ...(body.deck_ids ?? []).flatMap((id, i) => (decks.has(id.toLowerCase()) ? [] : [{ path: `body.deck_ids.${i}`, message: `names no deck of yours (${id})` }])),
    ...(body.task_ids ?? []).flatMap((id, i) => (tasks.has(id.toLowerCase()) ? [] : [{ path: `body.task_ids.${i}`, message: `names no task of yours (${id})` }])),
  ];
  if (errors.length > 0) throw problems.invalidRequest(errors);
}

/** The exams as the API shows them, with what prepares for them and the readiness that follows. */
async function examBodies(db: Db, principal: GeneralPrincipal, rows: ExamRow[], now: Date): Promise<Schemas['Exam'][]> {
  const preparation = await examPreparation(db, principal, rows.map((row) => row.id), now);
  const today = localDate(now, principal.time_zone);
  return rows.map((row) => ({
    ...row,
    ...preparation.get(row.id)!,
    days_left: daysBetween(today, row.exam_date),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  }));
}
