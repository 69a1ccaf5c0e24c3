// The comeback plan: after missed days, the backlog (cards and tasks that fell due before today) is spread evenly
// over the days left, new cards are paused while it lasts, and the smallest action that makes today a study day
// protects the streak.
//
// - A missed day is a calendar day, in the student's zone, with no study activity (a card review or a completed
//   task), between the last day with activity and today. One missed day (MISSED_DAYS_THRESHOLD) is enough: the
//   plan is null otherwise, and null for a student who has never studied (there is nothing to come back to).
// - The days left run from today up to the day before the nearest exam after today when it is within
//   COMEBACK_HORIZON_DAYS days, else COMEBACK_HORIZON_DAYS days (an exam today takes no backlog).
// - Cards and tasks are each spread as evenly as whole numbers allow, the remainder going to the earliest days
//   (92 cards over 5 days: 19, 19, 18, 18, 18), tasks in order of due date; days with nothing left are dropped.
// - New cards resume the day after the last day of the plan.
import type { ActionItem, LoopDeck, LoopExam, LoopTask, NextAction } from './loop-facts.ts';
import { plural, taskName } from './loop-wording.ts';
import { addDays, daysBetween, localDate } from './student-day.ts';

export const MISSED_DAYS_THRESHOLD = 1;
export const COMEBACK_HORIZON_DAYS = 7;

export interface ComebackInputs {
  now: Date;
  today: string;
  time_zone: string;
  last_activity_before_today: Date | null;
  studied_today: boolean;
  /** Open tasks, sorted by due date then id. */
  tasks: readonly LoopTask[];
  decks: readonly LoopDeck[];
  /** The nearest exam after today, if any. */
  nearest_exam: LoopExam | null;
}

export interface ComebackDay {
  date: string;
  review_cards: number;
  tasks: (ActionItem & { type: 'task' })[];
}

export interface ComebackPlan {
  missed_days: number;
  last_study_date: string;
  backlog: { overdue_cards: number; overdue_tasks: number };
  /** The last day the backlog may use: the day before the nearest exam, or the end of the default horizon. */
  plan_until: string;
  /** The exam the plan is fitted to, when it sets the horizon. */
  exam_id: string | null;
  days: ComebackDay[];
  new_cards_paused: boolean;
  /** The first day new cards come back, or null when nothing is paused. */
  new_cards_resume_on: string | null;
  /** The smallest thing that makes today a study day; kind `rest` once today already counts. */
  streak_action: NextAction;
  summary: string;
}

export function planComeback(inputs: ComebackInputs): ComebackPlan | null {
  if (!inputs.last_activity_before_today) return null;
  const lastStudyDate = localDate(inputs.last_activity_before_today, inputs.time_zone);
  const missedDays = daysBetween(lastStudyDate, inputs.today) - 1;
  if (missedDays < MISSED_DAYS_THRESHOLD) return null;

  const exam = inputs.nearest_exam;
  const untilExam = exam ? daysBetween(inputs.today, exam.exam_date) : Infinity;
  const fittedToExam = untilExam <= COMEBACK_HORIZON_DAYS;
  const dayCount = fittedToExam ? untilExam : COMEBACK_HORIZON_DAYS;

  const overdueCards = inputs.decks.reduce((sum, deck) => sum + deck.overdue_reviews, 0);
  const overdueTasks = inputs.tasks.filter((task) => task.due_at < inputs.now);
  const cardsPerDay = spread(overdueCards, dayCount);
  const tasksPerDay = spread(overdueTasks.length, dayCount);
  const days: ComebackDay[] = [];
  let taken = 0;
  for (let i = 0; i < dayCount; i++) {
    const tasks = overdueTasks
      .slice(taken, taken + tasksPerDay[i]!)
      .map((t) => ({ type: 'task' as const, id: t.id, title: t.title }));
    taken += tasks.length;
    if (cardsPerDay[i]! > 0 || tasks.length > 0)
      days.push({ date: addDays(inputs.today, i), review_cards: cardsPerDay[i]!, tasks });
  }
  const paused = overdueCards + overdueTasks.length > 0;
  const resumeOn = paused ? addDays(days.at(-1)!.date, 1) : null;

  return {
    missed_days: missedDays,
    last_study_date: lastStudyDate,
    backlog: { overdue_cards: overdueCards, overdue_tasks: overdueTasks.length },
    plan_until: addDays(inputs.today, dayCount - 1),
    exam_id: fittedToExam && exam ? exam.id : null,
    days,
    new_cards_paused: paused,
    new_cards_resume_on: resumeOn,
    streak_action: streakAction(inputs, overdueTasks),
    summary: summary(
      missedDays,
      overdueCards,
      overdueTasks.length,
      days,
      fittedToExam ? exam : null,
      dayCount,
      resumeOn,
    ),
  };
}

/** `total` split over `parts` as evenly as whole numbers allow, the remainder on the first parts. */
export function spread(total: number, parts: number): number[] {
  const base = Math.floor(total / parts);
  const remainder = total % parts;
  return Array.from({ length: parts }, (_, i) => base + (i < remainder ? 1 : 0));
}

function streakAction(inputs: ComebackInputs, overdueTasks: readonly LoopTask[]): NextAction {
  const none = { card_count: null, due_at: null };
  if (inputs.studied_today)
    return { kind: 'rest', item: null, ...none, reason: 'Today already counts as a study day: your streak is safe.' };
  const byBacklog = [...inputs.decks].sort(
    (a, b) => b.overdue_reviews - a.overdue_reviews || b.due_reviews - a.due_reviews || a.id.localeCompare(b.id),
  );
  const deck = byBacklog.find((d) => d.due_reviews > 0);
  if (deck) {
    return {
      kind: 'review_cards',
      item: { type: 'deck', id: deck.id, title: deck.title },
      card_count: 1,
      due_at: null,
      reason: `Review just 1 card of ${deck.title}: one review makes today a study day and restarts your streak.`,
    };
  }
  const task = overdueTasks[0];
  if (task) {
    return {
      kind: 'do_task',
      item: { type: 'task', id: task.id, title: task.title },
      card_count: null,
      due_at: task.due_at.toISOString(),
      reason: `Finish ${taskName(task)}: one completed task makes today a study day and restarts your streak.`,
    };
  }
  return {
    kind: 'start_something',
    item: null,
    ...none,
    reason: 'Review one card or complete one task: either makes today a study day and restarts your streak.',
  };
}

function summary(
  missedDays: number,
  cards: number,
  tasks: number,
  days: readonly ComebackDay[],
  exam: LoopExam | null,
  dayCount: number,
  resumeOn: string | null,
): string {
  const missed = `You missed ${plural(missedDays, 'day')}.`;
  if (!resumeOn) return `${missed} Nothing piled up while you were away: pick up where you left off.`;
  const backlog = [cards > 0 ? plural(cards, 'overdue card') : '', tasks > 0 ? plural(tasks, 'overdue task') : '']
    .filter(Boolean)
    .join(' and ');
  const verb = cards + tasks === 1 ? 'is' : 'are';
  const window = exam
    ? `the ${plural(dayCount, 'day')} before your ${exam.subject} exam on ${exam.exam_date}`
    : `the next ${plural(dayCount, 'day')}`;
  const perDay = cards > 0 ? ` (up to ${plural(days[0]!.review_cards, 'card')} a day)` : '';
  return `${missed} ${capitalise(backlog)} ${verb} spread over ${window}${perDay}; new cards are paused until ${resumeOn}.`;
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
