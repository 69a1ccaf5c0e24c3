// The daily loop: what one student should do now, and why. A pure function of its inputs, `now` and the student's
// time zone, so the same inputs always give the same plan (every tie is broken by id).
//
// Priority of the next action, first match wins:
//   1. an open task that is overdue or due within URGENT_TASK_HOURS (earliest due first)        -> do_task
//   2. due cards of a deck linked to an upcoming exam (nearest exam first, then most due cards)  -> review_cards
//   3. due cards of any other deck (most due cards first)                                        -> review_cards
//   4. an open task due later today, in the student's zone (earliest due first)                  -> do_task
//   5. an exam within EXAM_PREP_DAYS days (nearest first)                                         -> prepare_exam
//   6. nothing due: rest if the student has any tasks, decks or exams, else start_something
// During a comeback (see comeback-plan.ts) new cards are paused: only cards reviewed before count as due.
import { DateTime } from 'luxon';
import { planComeback, type ComebackPlan } from './comeback-plan.ts';
import { describeSpan, inDays, plural, taskName } from './loop-wording.ts';
import type { LoopDeck, LoopExam, LoopTask, NextAction } from './loop-facts.ts';
import type { Readiness } from './readiness.ts';
import { daysBetween, studentDay, type StudentDay } from './student-day.ts';

/** A task due within this many hours outranks due cards. */
export const URGENT_TASK_HOURS = 6;
/** An exam this close (in days, by the student's calendar) makes exam prep the action when nothing else is due. */
export const EXAM_PREP_DAYS = 14;

export interface LoopInputs {
  now: Date;
  time_zone: string;
  streak: number;
  /** Open tasks due before today ends (overdue ones included). */
  tasks: readonly LoopTask[];
  decks: readonly LoopDeck[];
  /** Exams on or after today. */
  exams: readonly LoopExam[];
  /** True when the student has any task, deck or exam at all (tells rest from start_something). */
  has_material: boolean;
  /** The latest study activity (a card review or a completed task) before today began, or null if none. */
  last_activity_before_today: Date | null;
  /** Whether the student has already studied today. */
  studied_today: boolean;
}

export interface ExamReadiness {
  exam_id: string;
  subject: string;
  exam_date: string;
  days_left: number;
  readiness: Readiness;
}

export interface DailyLoop {
  today: string;
  time_zone: string;
  generated_at: string;
  streak: number;
  studied_today: boolean;
  next_action: NextAction;
  readiness: ExamReadiness[];
  comeback_plan: ComebackPlan | null;
}

export function planDailyLoop(inputs: LoopInputs): DailyLoop {
  const day = studentDay(inputs.now, inputs.time_zone);
  const exams = inputs.exams.filter((e) => e.exam_date >= day.today).sort(byExamDate);
  const tasks = [...inputs.tasks].sort(byDueAt);
  const comeback = planComeback({
    now: inputs.now,
    today: day.today,
    time_zone: inputs.time_zone,
    last_activity_before_today: inputs.last_activity_before_today,
    studied_today: inputs.studied_today,
    tasks,
    decks: inputs.decks,
    nearest_exam: exams.find((e) => e.exam_date > day.today) ?? null,
  });
  return {
    today: day.today,
    time_zone: inputs.time_zone,
    generated_at: inputs.now.toISOString(),
    streak: inputs.streak,
    studied_today: inputs.studied_today,
    next_action: nextAction(inputs, day, tasks, exams, comeback),
    readiness: exams.map((exam) => ({
      exam_id: exam.id,
      subject: exam.subject,
      exam_date: exam.exam_date,
      days_left: daysBetween(day.today, exam.exam_date),
      readiness: exam.readiness,
    })),
    comeback_plan: comeback,
  };
}

function nextAction(
  inputs: LoopInputs,
  day: StudentDay,
  tasks: readonly LoopTask[],
  exams: readonly LoopExam[],
  comeback: ComebackPlan | null,
): NextAction {
  const now = inputs.now;
  const urgentBefore = now.getTime() + URGENT_TASK_HOURS * 3_600_000;
  const newCardsPaused = comeback?.new_cards_paused ?? false;
  // After a missed day the streak has already lapsed: there is nothing to keep (the comeback plan restarts it).
  const streakNote =
    comeback || inputs.studied_today || inputs.streak === 0
      ? ''
      : `; doing it now keeps your ${inputs.streak}-day streak`;

  const urgent = tasks.find((t) => t.due_at.getTime() <= urgentBefore);
  if (urgent) {
    const when =
      urgent.due_at <= now
        ? `was due ${describeSpan(urgent.due_at, now)} ago`
        : `is due in ${describeSpan(now, urgent.due_at)}`;
    return taskAction(urgent, `${taskName(urgent)} ${when}; it comes before anything else.`);
  }

  const dueCards = (deck: LoopDeck) => deck.due_reviews + (newCardsPaused ? 0 : deck.due_new);
  const pausedNote = newCardsPaused ? ' New cards stay paused until your backlog is cleared.' : '';
  const decks = inputs.decks
    .filter((d) => dueCards(d) > 0)
    .sort((a, b) => dueCards(b) - dueCards(a) || a.id.localeCompare(b.id));
  for (const exam of exams) {
    const deck = decks.find((d) => exam.deck_ids.includes(d.id));
    if (deck) {
      const count = dueCards(deck);
      const days = daysBetween(day.today, exam.exam_date);
      return cardAction(
        deck,
        count,
        `${cardsDue(count, deck.title)} and they prepare for your ${exam.subject} exam ${inDays(days)}${streakNote}.${pausedNote}`,
      );
    }
  }
  const deck = decks[0];
  if (deck) {
    const count = dueCards(deck);
    return cardAction(
      deck,
      count,
      `${cardsDue(count, deck.title)}${streakNote || '; reviewing them now keeps the intervals on schedule'}.${pausedNote}`,
    );
  }

  const laterToday = tasks.find((t) => t.due_at < day.end);
  if (laterToday) {
    const time = DateTime.fromJSDate(laterToday.due_at, { zone: inputs.time_zone }).toFormat('HH:mm');
    return taskAction(laterToday, `${taskName(laterToday)} is due today at ${time}${streakNote}.`);
  }

  const exam = exams.find((e) => daysBetween(day.today, e.exam_date) <= EXAM_PREP_DAYS);
  if (exam) {
    const days = daysBetween(day.today, exam.exam_date);
    return {
      kind: 'prepare_exam',
      item: { type: 'exam', id: exam.id, title: exam.subject },
      card_count: null,
      due_at: null,
      reason: `Nothing is due; your ${exam.subject} exam is ${inDays(days)} and your readiness is ${exam.readiness.percent}%: work on its topics or prep tasks.`,
    };
  }

  if (!inputs.has_material) {
    return idle('start_something', 'You have no tasks, decks or exams yet: add a task or create a deck to get a plan.');
  }
  return idle(
    'rest',
    inputs.studied_today
      ? 'You have studied today and nothing else is due: rest.'
      : 'Nothing is due right now: rest, or work ahead.',
  );
}

function taskAction(task: LoopTask, reason: string): NextAction {
  return {
    kind: 'do_task',
    item: { type: 'task', id: task.id, title: task.title },
    card_count: null,
    due_at: task.due_at.toISOString(),
    reason,
  };
}

function cardAction(deck: LoopDeck, count: number, reason: string): NextAction {
  return {
    kind: 'review_cards',
    item: { type: 'deck', id: deck.id, title: deck.title },
    card_count: count,
    due_at: null,
    reason,
  };
}

function idle(kind: 'rest' | 'start_something', reason: string): NextAction {
  return { kind, item: null, card_count: null, due_at: null, reason };
}

function cardsDue(count: number, deckTitle: string): string {
  return `${plural(count, 'card')} of ${deckTitle} ${count === 1 ? 'is' : 'are'} due`;
}

function byDueAt(a: LoopTask, b: LoopTask): number {
  return a.due_at.getTime() - b.due_at.getTime() || a.id.localeCompare(b.id);
}

function byExamDate(a: LoopExam, b: LoopExam): number {
  return a.exam_date.localeCompare(b.exam_date) || a.id.localeCompare(b.id);
}
