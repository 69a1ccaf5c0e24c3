import { listUpcomingExams } from '../../db/queries/exams.ts';
import { listOpenTasks } from '../../db/queries/tasks.ts';
import { findStreak, findStudyActivity, hasStudyMaterial, listDueDecks } from '../../db/queries/today.ts';
import { problems } from '../../server/problems.ts';
import { planDailyLoop, type LoopExam } from '../../domain/daily-loop.ts';
import { examPreparation } from './exam-preparation.ts';
import { studentDay } from '../../domain/student-day.ts';
import type { GeneralHandlers } from './types.ts';

export const getTodayLoop: GeneralHandlers['getTodayLoop'] = async ({ principal }, { db, now: clock }) => {
  const now = clock();
  const userId = principal.user_id;
  const zone = principal.time_zone;
  const day = studentDay(now, zone);

  const [streak, tasks, decks, hasMaterial, exams, activity] = await Promise.all([
    findStreak(db, userId),
    listOpenTasks(db, userId, { dueBefore: day.end }),
    listDueDecks(db, userId, now, day.start),
    hasStudyMaterial(db, userId),
    listUpcomingExams(db, userId, day.today),
    findStudyActivity(db, userId, day.start),
  ]);
  if (streak === undefined) throw problems.notFound('This account no longer exists.');

  // Readiness exactly as the exam plans show it.
  const preparation = await examPreparation(db, principal, exams.map((exam) => exam.id), now);
  const loopExams: LoopExam[] = exams.map((exam) => {
    const { deck_ids, readiness } = preparation.get(exam.id)!;
    return { ...exam, deck_ids, readiness };
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
