// Exam plans: an exam per subject and date, the decks and tasks that prepare for it, and the readiness for it
// (services/readiness/preparation.ts), computed at read time from the student's cards, tasks and study days. What a
// write does (its links, event and readiness moves) is services/exams/writes.ts.
import { findExam, listExams as listExamRows } from '../../db/queries/exams.ts';
import { streamReadiness } from '../../services/readiness/readiness-stream.ts';
import { examBodies, examBody } from '../../services/exams/exam-body.ts';
import { addExam, changeExam, removeExam } from '../../services/exams/writes.ts';
import { problems } from '../../server/http/problems.ts';
import { dateIdCursor, page } from '../../server/contract/cursor.ts';
import { idempotently } from '../../server/http/idempotency.ts';
import type { GeneralHandlers } from './types.ts';

const noExam = () => problems.notFound('You have no exam with this id.');

export const listExams: GeneralHandlers['listExams'] = async ({ query, principal }, { db, now }) => {
  const rows = await listExamRows(db, principal.user_id, { limit: query.limit, after: dateIdCursor(query.cursor) });
  const result = page(rows, query.limit, (row) => [row.exam_date, row.id]);
  return { status: 200, body: { ...result, data: await examBodies(db, principal, result.data, now()) } };
};

export const createExam: GeneralHandlers['createExam'] = async ({ headers, body, principal }, { db, now }) => {
  const at = now();
  return idempotently(
    db,
    { userId: principal.user_id, key: headers['Idempotency-Key'], operationId: 'createExam', body, now: at },
    async (trx) => ({
      status: 201 as const,
      body: await addExam(trx, principal, body, at),
    }),
  );
};

export const getExam: GeneralHandlers['getExam'] = async ({ path, principal }, { db, now }) => {
  const row = await findExam(db, principal.user_id, path.exam_id);
  if (!row) throw noExam();
  return { status: 200, body: await examBody(db, principal, row, now()) };
};

export const updateExam: GeneralHandlers['updateExam'] = async ({ path, body, principal }, { db, now }) => {
  const exam = await changeExam(db, principal, path.exam_id, body, now());
  if (!exam) throw noExam();
  return { status: 200, body: exam };
};

export const deleteExam: GeneralHandlers['deleteExam'] = async ({ path, principal }, { db, now }) => {
  if (!(await removeExam(db, principal, path.exam_id, now()))) throw noExam();
  return { status: 204, body: undefined };
};

/** The readiness of every upcoming exam, live (services/readiness/readiness-stream.ts). */
export const streamExamReadiness: GeneralHandlers['streamExamReadiness'] = async (
  { headers, principal },
  { db, now, lifecycle, streams },
  { req, res },
) => {
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
    onError: (error) =>
      req.log.warn({ err: error }, 'the readiness stream could not read the moves; it ends, the client reconnects'),
  });
};
