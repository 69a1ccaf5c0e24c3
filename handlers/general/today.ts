import { deckLinks, linkedCards, studyDays, taskLinks } from '../../db/queries/exams.ts';
import { findStreak, findStudyActivity, hasStudyMaterial, listDueDecks, listExamsFrom, listOpenTasksDueBefore } from '../../db/queries/today.ts';
import { problems } from '../../server/problems.ts';
import { planDailyLoop, type LoopExam } from './daily-loop.ts';
import { CONSISTENCY_WINDOW_DAYS, readiness } from './readiness.ts';
import { addDays, startOfDate, studentDay } from './student-day.ts';
import type { GeneralHandlers } from './types.ts';

export const getTodayLoop: GeneralHandlers['getTodayLoop'] = async ({ principal }, { db, now: clock }) => {
  const now = clock();
  const userId = principal.user_id;
  const zone = principal.time_zone;
  const day = studentDay(now, zone);
  const windowStart = startOfDate(addDays(day.today, 1 - CONSISTENCY_WINDOW_DAYS), zone);

  const [streak, tasks, decks, hasMaterial, exams, activity, study_days] = await Promise.all([
    findStreak(db, userId),
    listOpenTasksDueBefore(db, userId, day.end),
    listDueDecks(db, userId, now, day.start),
    hasStudyMaterial(db, userId),
    listExamsFrom(db, userId, day.today),
    findStudyActivity(db, userId, day.start),
    studyDays(db, userId, zone, windowStart),
  ]);
  if (streak === undefined) throw problems.notFound('This account no longer exists.');

  // Readiness from the same queries and formula as the exam plans (handlers/general/exams.ts).
  const examIds = exams.map((exam) => exam.id);
  const [decksOfExams, tasksOfExams, cardsOfExams] = await Promise.all([
    deckLinks(db, userId, examIds),
    taskLinks(db, userId, examIds),
    linkedCards(db, userId, examIds),
  ]);
  const loopExams: LoopExam[] = exams.map((exam) => {
    const prep = tasksOfExams.filter((link) => link.exam_id === exam.id);
    return {
      ...exam,
      deck_ids: decksOfExams.filter((link) => link.exam_id === exam.id).map((link) => link.deck_id),
      readiness: readiness({
        now,
        cards: cardsOfExams.filter((card) => card.exam_id === exam.id),
        tasks: { total: prep.length, completed: prep.filter((link) => link.completed).length },
        study_days,
      }),
    };
  });

  const body = planDailyLoop({
    now,
    time_zone: zone,
    streak,
    tasks,
    decks,
    exams: loopExams,
    has_material: hasMaterial,
    last_activity_before_today: activity.last_before_today,
    studied_today: activity.studied_today,
  });
  return { status: 200, body };
};
