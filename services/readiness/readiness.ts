// Readiness moves, for the readiness stream. A change that may move a student's readiness calls readinessMoved() in
// its own transaction: the readiness of the student's upcoming exams is computed there, compared with what was last
// pushed, and each exam that moved is recorded under the student's next version number, announced on commit on the
// notification path. Streams, in any process, then read what moved after the version they sent last; a client that
// reconnects with that version as Last-Event-ID gets the same. Computing once per move, in the writer, keeps
// streams cheap and makes every process send the same events with the same ids.
import type { Db } from '../../db/connect.ts';
import { findUpcomingPreparation } from '../../db/queries/exams.ts';
import { awardXp } from '../../db/queries/xp.ts';
import { lockStudent } from '../../db/student-transaction.ts';
import {
  findReadinessComparison,
  nextReadinessVersion,
  readinessMovedSince,
  recordReadiness,
} from '../../db/queries/readiness.ts';
import { preparationOf, studyWindow } from './preparation.ts';
import type { Readiness } from '../../domain/readiness.ts';
import { localDate } from '../../domain/student-day.ts';
import { readinessClaims } from '../../domain/xp.ts';
import { notifyAfterCommit } from '../../db/notifications.ts';
import type { Student } from '../../server/auth/principal.ts';
import { afterReview, type ReviewedCard } from './readiness-after-review.ts';

/** The notification channel of readiness moves; the payload is `<user id>:<version>`. */
export const READINESS_CHANNEL = 'readiness_moved';
/** The stream covers this many exams from today on, nearest first (spec: ReadinessSnapshot). */
export const STREAMED_EXAMS = 100;
/** Components closer than this count as unchanged: a moment's decay of memory is not a move. */
const COMPONENT_TOLERANCE = 0.0005;

/** One exam as the stream shows it (spec: ExamReadinessState). */
export interface ExamReadinessState {
  exam_id: string;
  subject: string;
  exam_date: string;
  readiness: Readiness;
}

/** One move as the stream sends it (spec: ReadinessMoved), under its version. */
export interface ReadinessMove {
  version: number;
  at: string;
  exams: ExamReadinessState[];
  removed_exam_ids: string[];
}

/** The readiness of the student's exams from today on, nearest first, computed for `now` (one statement). */
export async function upcomingReadiness(db: Db, student: Student, now: Date): Promise<ExamReadinessState[]> {
  const { exams, study_days } = await findUpcomingPreparation(
    db,
    student.user_id,
    localDate(now, student.time_zone),
    studyWindow(now, student.time_zone),
    STREAMED_EXAMS,
  );
  return readinessStates(exams, study_days, now);
}

function readinessStates(
  exams: Awaited<ReturnType<typeof findUpcomingPreparation>>['exams'],
  studyDays: number,
  now: Date,
): ExamReadinessState[] {
  return exams.map(({ id, subject, exam_date, ...facts }) => ({
    exam_id: id,
    subject,
    exam_date,
    readiness: preparationOf(facts, studyDays, now).readiness,
  }));
}

/**
 * Call inside the transaction of every change that may move the student's readiness. Takes the student's lock
 * first (writers that start with studentTransaction hold it already): concurrent moves of one student wait there for
 * each other, so each compares with what the one before recorded and sees its committed changes. Only a move counts
 * the student's version up. An exam that moved up to a readiness milestone earns its xp here, once (domain/xp.ts).
 */
export async function readinessMoved(trx: Db, student: Student, at: Date): Promise<void> {
  await lockStudent(trx, student.user_id);
  await recordMoves(
    trx,
    student,
    at,
    await findReadinessComparison(
      trx,
      student.user_id,
      localDate(at, student.time_zone),
      studyWindow(at, student.time_zone),
      STREAMED_EXAMS,
    ),
  );
}

/**
 * readinessMoved after a graded review whose statement returned the facts as they were before it (with the student's
 * lock held): the review is applied to them (readiness-after-review.ts) instead of reading them again. Should they not
 * hold the card as it was, they are read again.
 */
export async function readinessMovedByReview(
  trx: Db,
  student: Student,
  at: Date,
  { before, review }: ReviewedFacts,
): Promise<void> {
  const after = afterReview(before, review);
  if (!after) return readinessMoved(trx, student, at);
  await recordMoves(trx, student, at, { ...after, pushed: before.pushed });
}

/** What a graded review's statement returned of readiness's facts before it, and the card it reviewed. */
export interface ReviewedFacts {
  before: ReadinessComparison & { day_studied: boolean };
  review: ReviewedCard;
}

/** What a move compares: the upcoming exams' preparation facts, the window's study days, and what was last pushed. */
export type ReadinessComparison = Awaited<ReturnType<typeof findReadinessComparison>>;

/** The window, in `zone` at `at`, whose facts a move compares: the exams from today on and the study days counted. */
export function readinessWindow(at: Date, zone: string) {
  return { fromDate: localDate(at, zone), limit: STREAMED_EXAMS, ...studyWindow(at, zone) };
}

/**
 * The facts after a graded review when the review moves no exam's readiness from what was last pushed, so that it has
 * nothing to record (pure: the facts are the caller's, read before the review); undefined when it moves something, or
 * when the facts do not hold the card as it was (readinessMovedByReview then reads them again).
 */
export function factsAfterUnmovingReview(at: Date, { before, review }: ReviewedFacts): ReadinessComparison | undefined {
  const after = afterReview(before, review);
  if (!after) return undefined;
  const facts = { ...after, pushed: before.pushed };
  const { moved, removed } = movesOf(facts, at);
  return moved.length + removed.length === 0 ? facts : undefined;
}

/** The exams whose readiness at `at` differs from what was last pushed, and the pushed exams no longer shown. */
function movesOf(facts: ReadinessComparison, at: Date) {
  const current = readinessStates(facts.exams, facts.study_days, at);
  const pushed = new Map(facts.pushed.map((row) => [row.exam_id, row.state as ExamReadinessState]));
  const moved = current.filter((state) => !sameState(pushed.get(state.exam_id), state));
  const shown = new Set(current.map((state) => state.exam_id));
  const removed = [...pushed.keys()].filter((examId) => !shown.has(examId));
  return { moved, removed };
}

async function recordMoves(trx: Db, student: Student, at: Date, facts: ReadinessComparison): Promise<void> {
  const { moved, removed } = movesOf(facts, at);
  // Nothing moved (the usual review): no version, so no write. Versions number moves, not calls; the student's lock
  // (taken by the caller's transaction) already orders this student's moves, so taking the version row only when
  // there is a move loses nothing.
  if (moved.length + removed.length === 0) return;
  const version = await nextReadinessVersion(trx, student.user_id);
  for (const state of moved)
    await recordReadiness(trx, { exam_id: state.exam_id, user_id: student.user_id, version, state, moved_at: at });
  for (const examId of removed)
    await recordReadiness(trx, { exam_id: examId, user_id: student.user_id, version, state: null, moved_at: at });
  // Only exams that moved can have reached a milestone: the usual move (or none) costs no ledger query.
  const today = localDate(at, student.time_zone);
  for (const state of moved) {
    for (const claim of readinessClaims(state.exam_id, state.readiness.percent, today))
      await awardXp(trx, student.user_id, claim, at);
  }
  await notifyAfterCommit(trx, READINESS_CHANNEL, `${student.user_id}:${version}`);
}

/** The moves after `version`, oldest first; an exam that moved several times appears once, in its latest move. */
export async function movesSince(db: Db, userId: string, version: number): Promise<ReadinessMove[]> {
  const moves = new Map<number, ReadinessMove>();
  for (const row of await readinessMovedSince(db, userId, version)) {
    let move = moves.get(row.version);
    if (!move)
      moves.set(
        row.version,
        (move = { version: row.version, at: row.moved_at.toISOString(), exams: [], removed_exam_ids: [] }),
      );
    if (row.state === null) move.removed_exam_ids.push(row.exam_id);
    else move.exams.push(row.state as ExamReadinessState);
  }
  return [...moves.values()];
}

/** Parses a READINESS_CHANNEL payload. */
export function parseMove(payload: string): { userId: string; version: number } | undefined {
  const [userId, version] = payload.split(':');
  const number = Number(version);
  return userId && Number.isSafeInteger(number) ? { userId, version: number } : undefined;
}

/** Whether a student would see a difference: subject, date, percent, the counts, or a component that moved. */
export function sameState(before: ExamReadinessState | undefined, after: ExamReadinessState): boolean {
  if (!before) return false;
  const [a, b] = [before.readiness, after.readiness];
  const close = (x: number | null, y: number | null) =>
    x === null || y === null ? x === y : Math.abs(x - y) < COMPONENT_TOLERANCE;
  return (
    before.subject === after.subject &&
    before.exam_date === after.exam_date &&
    a.percent === b.percent &&
    close(a.memory, b.memory) &&
    close(a.coverage, b.coverage) &&
    close(a.consistency, b.consistency) &&
    // Key by key: jsonb does not keep the order of an object's keys.
    (Object.keys(b.details) as Array<keyof Readiness['details']>).every((key) => a.details[key] === b.details[key])
  );
}
