// What prepares a student for each of some exams — the linked decks and tasks — and the readiness that follows,
// from one statement for the whole set (db/queries/exams.ts). The exam plans, the readiness stream and the daily loop
// all show readiness through preparationOf, so they always agree.
import type { Db } from '../../db/connect.ts';
import { findExamPreparation, type StudyWindow } from '../../db/queries/exams.ts';
import { fromInstantMs } from '../../db/queries/json-instants.ts';
import { CONSISTENCY_WINDOW_DAYS, readiness, type Readiness } from '../../domain/readiness.ts';
import { addDays, localDate, startOfDate } from '../../domain/student-day.ts';

export interface ExamPreparation {
  deck_ids: string[];
  task_ids: string[];
  readiness: Readiness;
}

/** One exam's links and card facts as the preparation queries return them. */
export interface PreparationFacts {
  decks: Array<{ deck_id: string }>;
  tasks: Array<{ task_id: string; completed: boolean }>;
  cards: Array<{ interval_days: number; last_reviewed_ms: number | null }>;
}

const NO_PREPARATION: PreparationFacts = { decks: [], tasks: [], cards: [] };

export async function examPreparation(
  db: Db,
  student: { user_id: string; time_zone: string },
  examIds: readonly string[],
  now: Date,
): Promise<Map<string, ExamPreparation>> {
  if (examIds.length === 0) return new Map();
  const { exams, study_days } = await findExamPreparation(
    db,
    student.user_id,
    examIds,
    studyWindow(now, student.time_zone),
  );
  const facts = new Map(exams.map((exam) => [exam.id, exam]));
  return new Map(
    examIds.map((examId) => [examId, preparationOf(facts.get(examId) ?? NO_PREPARATION, study_days, now)]),
  );
}

/** The window of CONSISTENCY_WINDOW_DAYS local days, today included, that readiness counts study days in. */
export function studyWindow(now: Date, zone: string): StudyWindow {
  const today = localDate(now, zone);
  const known = lastWindows.get(zone);
  if (known?.today === today) return { ...known.window };
  const window = { zone, since: startOfDate(addDays(today, 1 - CONSISTENCY_WINDOW_DAYS), zone) };
  lastWindows.set(zone, { today, window });
  return { ...window };
}

/** Each zone's window of the last day asked about: every read and write of readiness that day asks for it (Luxon's zone arithmetic is slow). */
const lastWindows = new Map<string, { today: string; window: StudyWindow }>();

/** An exam's links and its readiness at `now`, from its preparation facts and the student's study days. */
export function preparationOf(facts: PreparationFacts, study_days: number, now: Date): ExamPreparation {
  return {
    deck_ids: facts.decks.map((link) => link.deck_id),
    task_ids: facts.tasks.map((link) => link.task_id),
    readiness: readiness({
      now,
      cards: facts.cards.map((card) => ({
        interval_days: card.interval_days,
        last_reviewed_at: fromInstantMs(card.last_reviewed_ms),
      })),
      tasks: { total: facts.tasks.length, completed: facts.tasks.filter((link) => link.completed).length },
      study_days,
    }),
  };
}
