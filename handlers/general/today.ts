import { findDailyLoopFacts } from '../../db/queries/today.ts';
import { problems } from '../../server/http/problems.ts';
import { planDailyLoop } from '../../domain/daily-loop.ts';
import type { LoopExam } from '../../domain/loop-facts.ts';
import { preparationOf, studyWindow } from '../../services/readiness/preparation.ts';
import { studentDay } from '../../domain/student-day.ts';
import type { GeneralHandlers } from './types.ts';

export const getTodayLoop: GeneralHandlers['getTodayLoop'] = async ({ principal }, { db, now: clock }) => {
  const now = clock();
  const zone = principal.time_zone;
  const day = studentDay(now, zone);

  const facts = await findDailyLoopFacts(db, principal.user_id, { now, ...day }, studyWindow(now, zone));
  if (facts === undefined) throw problems.notFound('This account no longer exists.');

  // Readiness exactly as the exam plans show it.
  const exams: LoopExam[] = facts.exams.map(({ id, subject, exam_date, ...preparation }) => {
    const { deck_ids, readiness } = preparationOf(preparation, facts.study_days, now);
    return { id, subject, exam_date, deck_ids, readiness };
  });

  const body = planDailyLoop({
    now,
    time_zone: zone,
    streak: facts.streak,
    tasks: facts.tasks,
    decks: facts.decks,
    exams,
    has_material: facts.has_material,
    last_activity_before_today: facts.last_before_today,
    studied_today: facts.studied_today,
  });
  return { status: 200, body };
};
