// Exams as the API shows them: the row with what prepares for it (linked decks and tasks), the readiness that follows
// (services/readiness/preparation.ts) and the days left, on the student's calendar. The exam plans answer with it and
// the exam events carry it as their object, so an answer and an event about one exam always agree.
import type { Db } from '../../db/connect.ts';
import type { ExamRow } from '../../db/queries/exams.ts';
import { daysBetween, localDate } from '../../domain/student-day.ts';
import type { components } from '../../generated/general/types.ts';
import type { Student } from '../../server/auth/principal.ts';
import { examPreparation } from '../readiness/preparation.ts';

export type Exam = components['schemas']['Exam'];

/** The exams of `rows`, in their order, as of `now`: one preparation query for the whole set. */
export async function examBodies(db: Db, student: Student, rows: ExamRow[], now: Date): Promise<Exam[]> {
  const preparation = await examPreparation(
    db,
    student,
    rows.map((row) => row.id),
    now,
  );
  const today = localDate(now, student.time_zone);
  return rows.map((row) => ({
    ...row,
    ...preparation.get(row.id)!,
    days_left: daysBetween(today, row.exam_date),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  }));
}

/** One exam as of `now`. */
export async function examBody(db: Db, student: Student, row: ExamRow, now: Date): Promise<Exam> {
  const [exam] = await examBodies(db, student, [row], now);
  return exam!;
}
