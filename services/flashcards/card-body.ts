// Decks, cards and review results as the API shows them, from their rows: the one mapper that the flashcards
// operations and the sync's commands answer with; and a review's time, checked against the offline window.
import type { CardRow, DeckRow } from '../../db/queries/flashcards.ts';
import { ReviewTimeError } from '../../domain/errors.ts';
import { isWithinOfflineWindow, OFFLINE_REVIEW_WINDOW_DAYS } from '../../domain/srs.ts';
import type { components } from '../../generated/general/types.ts';
import type { ReviewRow } from '../../db/queries/graded-review.ts';

type Schemas = components['schemas'];

/**
 * When a review happened: the client's time within the offline window, or undefined when it gives none (the review
 * happens as it is recorded: services/flashcards/reviews.ts).
 */
export function reviewTime(reviewedAt: string | undefined, now: Date, path: string): Date | undefined {
  if (reviewedAt === undefined) return undefined;
  const at = new Date(reviewedAt);
  if (!isWithinOfflineWindow(at, now)) throw new ReviewTimeError(path, OFFLINE_REVIEW_WINDOW_DAYS);
  return at;
}

export function deckBody(row: DeckRow): Schemas['Deck'] {
  return {
    ...row,
    next_due_at: row.next_due_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

// Field by field, as taskBody: a rest and a spread of the row copied each card twice, which made turning a page of
// 20 cards into JSON several times dearer than this (a sync page of cards, issue 38).
export function cardBody(row: CardRow): Schemas['Card'] {
  return {
    id: row.id,
    deck_id: row.deck_id,
    front: row.front,
    back: row.back,
    ease: row.ease,
    repetitions: row.repetitions,
    interval_days: row.interval_days,
    next_due_at: row.next_due_at.toISOString(),
    last_reviewed_at: row.last_reviewed_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    fsrs: row.fsrs_state,
  };
}

export function reviewResultBody({ review, card }: { review: ReviewRow; card: CardRow }): Schemas['ReviewResult'] {
  return {
    review: { ...review, reviewed_at: review.reviewed_at.toISOString(), next_due_at: review.next_due_at.toISOString() },
    card: cardBody(card),
  };
}
