// What a readiness move compares, moved by one graded review without reading it again: the review's statement returns
// the facts as they were just before it (db/queries/graded-review.ts), and the review changes exactly two of them. The
// reviewed card's memory (its interval and last review) in every exam whose linked decks hold it, and the window's
// study days when the review's day had no study yet. Pure, so a test can hold it against a full recomputation.
import type { PreparationFacts } from './preparation.ts';

/** A card's memory as the preparation facts carry it. */
export interface CardMemory {
  interval_days: number;
  last_reviewed_ms: number | null;
}

/** One review's change to the facts. */
export interface ReviewedCard {
  deck_id: string;
  /** The card's memory before the review, and after it (a late review's: the card as the replay of its log left it). */
  before: CardMemory;
  after: CardMemory;
  /** Whether the review's local day falls in the window that readiness counts study days in. */
  in_window: boolean;
}

export interface ReadinessFacts<E extends PreparationFacts> {
  exams: E[];
  study_days: number;
}

/**
 * The facts after the review, from the facts before it and whether its day had study already; undefined when an exam
 * linked to the card's deck holds no card with the memory it had (the facts were not read before this review).
 */
export function afterReview<E extends PreparationFacts>(
  facts: ReadinessFacts<E> & { day_studied: boolean },
  review: ReviewedCard,
): ReadinessFacts<E> | undefined {
  const moved =
    review.before.interval_days !== review.after.interval_days ||
    review.before.last_reviewed_ms !== review.after.last_reviewed_ms;
  const exams: E[] = [];
  for (const exam of facts.exams) {
    if (!moved || !exam.decks.some((link) => link.deck_id === review.deck_id)) {
      exams.push(exam);
      continue;
    }
    // Cards with equal memory count the same, so any one of them stands for the reviewed card.
    const at = exam.cards.findIndex(
      (card) =>
        card.interval_days === review.before.interval_days && card.last_reviewed_ms === review.before.last_reviewed_ms,
    );
    if (at < 0) return undefined;
    const cards = [...exam.cards];
    cards[at] = { ...review.after };
    exams.push({ ...exam, cards });
  }
  return { exams, study_days: facts.study_days + (review.in_window && !facts.day_studied ? 1 : 0) };
}
