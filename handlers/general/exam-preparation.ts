// What prepares a student for each of some exams — the linked decks and tasks — and the readiness that follows,
// from one query per kind for the whole set. The exam plans and the daily loop both show readiness through this,
// so they always agree.
import type { Db } from '../../db/connect.ts';
import { deckLinks, linkedCards, studyDays, taskLinks } from '../../db/queries/exams.ts';
import { CONSISTENCY_WINDOW_DAYS, readiness, type Readiness } from '../../domain/readiness.ts';
import { addDays, localDate, startOfDate } from '../../domain/student-day.ts';

export interface ExamPreparation {
  deck_ids: string[];
  task_ids: string[];
  readiness: Readiness;
}

export async function examPreparation(
  db: Db,
  student: { user_id: string; time_zone: string },
  examIds: readonly string[],
  now: Date,
): Promise<Map<string, ExamPreparation>> {
  const { user_id: userId, time_zone: zone } = student;
  const windowStart = startOfDate(addDays(localDate(now, zone), 1 - CONSISTENCY_WINDOW_DAYS), zone);
  const [decks, tasks, cards, study_days] = await Promise.all([
    deckLinks(db, userId, examIds),
    taskLinks(db, userId, examIds),
    linkedCards(db, userId, examIds),
    studyDays(db, userId, zone, windowStart),
  ]);
  return new Map(
    examIds.map((examId) => {
      const prep = tasks.filter((task) => task.exam_id === examId);
      return [
        examId,
        {
          deck_ids: decks.filter((link) => link.exam_id === examId).map((link) => link.deck_id),
          task_ids: prep.map((task) => task.task_id),
          readiness: readiness({
            now,
            cards: cards.filter((card) => card.exam_id === examId),
            tasks: { total: prep.length, completed: prep.filter((task) => task.completed).length },
            study_days,
          }),
        },
      ];
    }),
  );
}
