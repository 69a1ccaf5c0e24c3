// What the daily loop (daily-loop.ts) and the comeback plan (comeback-plan.ts) both read of a student's material, and
// the action they propose: one module below both, so that neither has to import the other's types.
import type { Readiness } from './readiness.ts';

export interface LoopTask {
  id: string;
  title: string;
  course: string | null;
  due_at: Date;
}

export interface LoopDeck {
  id: string;
  title: string;
  /** Cards reviewed at least once whose next review is due now. */
  due_reviews: number;
  /** Of those, the ones that were already due before today began (the backlog of missed days). */
  overdue_reviews: number;
  /** Cards never reviewed yet (new material) that are due now. */
  due_new: number;
}

export interface LoopExam {
  id: string;
  subject: string;
  /** 'YYYY-MM-DD' in the student's zone. */
  exam_date: string;
  deck_ids: readonly string[];
  /** Today's readiness, from readiness.ts. */
  readiness: Readiness;
}

export type ActionKind = 'review_cards' | 'do_task' | 'prepare_exam' | 'rest' | 'start_something';

export interface ActionItem {
  type: 'task' | 'deck' | 'exam';
  id: string;
  title: string;
}

export interface NextAction {
  kind: ActionKind;
  item: ActionItem | null;
  /** Cards to review (review_cards), else null. */
  card_count: number | null;
  /** When the task is due (do_task), else null. */
  due_at: string | null;
  reason: string;
}
