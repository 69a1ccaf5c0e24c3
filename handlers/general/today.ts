import {
  countExamTasks,
  findStreak,
  findStudyActivity,
  hasStudyMaterial,
  listDueDecks,
  listExamCards,
  listExamDeckLinks,
  listExamsFrom,
  listOpenTasksDueBefore,
} from '../../db/queries/today.ts';
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

  const [streak, tasks, decks, hasMaterial, exams, activity] = await Promise.all([
    findStreak(db, userId),
    listOpenTasksDueBefore(db, userId, day.end),
    listDueDecks(db, userId, now, day.start),
    hasStudyMaterial(db, userId),
    listExamsFrom(db, userId, day.today),
    findStudyActivity(db, userId, zone, windowStart, day.start),
  ]);
  if (streak === undefined) throw problems.notFound('This account no longer exists.');

  const examIds = exams.map((exam) => exam.id);
  const [deckLinks, examCards, examTasks] = await Promise.all([
    listExamDeckLinks(db, userId, examIds),
    listExamCards(db, userId, examIds),
    countExamTasks(db, userId, examIds),
  ]);
  const loopExams: LoopExam[] = exams.map((exam) => {
    const prep = examTasks.find((row) => row.exam_id === exam.id);
    return {
      ...exam,
      deck_ids: deckLinks.filter((link) => link.exam_id === exam.id).map((link) => link.deck_id),
      readiness: readiness({
        now,
        cards: examCards.filter((card) => card.exam_id === exam.id),
        tasks: { total: Number(prep?.total ?? 0), completed: Number(prep?.completed ?? 0) },
        study_days: activity.study_days,
      }),
    };
  });

  const body = planDailyLoop({
    now,
    time_zone: zone,
    streak,
    tasks,
    decks: decks.map((deck) => ({ ...deck, due_reviews: Number(deck.due_reviews), overdue_reviews: Number(deck.overdue_reviews), due_new: Number(deck.due_new) })),
    exams: loopExams,
    has_material: hasMaterial,
    last_activity_before_today: activity.last_before_today,
    studied_today: activity.studied_today,
  });
  return { status: 200, body };
};
