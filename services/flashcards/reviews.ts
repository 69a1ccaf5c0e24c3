// A graded review is one write of several steps: lock the card, take the scheduling step of its deck's scheduler
// (domain/srs.ts: SM-2, or FSRS with the deck's parameters), update the card, log the review, count the study day and
// its xp, and move readiness (services/progress/). It is the same for one review and for a batch synced after offline
// study, in the caller's transaction (an idempotent request's), so a crash leaves all of it or none and concurrent
// reviews of one card apply one after the other.
import type { Db } from '../../db/connect.ts';
import {
  deckSchedulers,
  lockCardForReview,
  lockCards,
  type CardRow,
  type ReviewOutcome,
} from '../../db/queries/flashcards.ts';
import {
  writeGradedReview,
  writeGradedReviewFollowed,
  writeGradedReviewWithFacts,
  type GradedReviewWrite,
  type ReviewRow,
} from '../../db/queries/graded-review.ts';
import { fsrsParameters, type FsrsParameters } from '../../domain/fsrs.ts';
import { reviewStep, type Grade } from '../../domain/srs.ts';
import { localDate } from '../../domain/student-day.ts';
import { reviewClaim } from '../../domain/xp.ts';
import { progress, studyInStatement } from '../progress/progress.ts';
import { readinessWindow } from '../readiness/readiness.ts';
import { emitEvents } from '../events/emit.ts';
import { cardEvent } from './writes.ts';
import type { Student } from '../../server/auth/principal.ts';

/** A review as logged, and its card as it is after it. */
export interface RecordedReview {
  review: ReviewRow;
  card: CardRow;
}

/** A review of a batch: which card, the grade, and when it happened (now, or earlier offline). */
export interface GradedCard {
  card_id: string;
  grade: Grade;
  reviewedAt: Date;
}

/**
 * One review of the student's card; undefined when the student has no card with this id (nothing is written). Two
 * statements, and a third only when readiness moved: the locks with the card, then the review's writes with what
 * readiness compares (nothing, for a student without an upcoming exam or a pushed state: no review can move it), then
 * its event. The card's read takes the student's lock, so the caller's transaction need not take it first.
 */
export async function recordReview(
  trx: Db,
  student: Student,
  review: GradedCard,
  at: Date,
): Promise<RecordedReview | undefined> {
  const window = readinessWindow(at, student.time_zone);
  const locked = await lockCardForReview(trx, student.user_id, review.card_id, window.fromDate);
  if (!locked) return undefined;
  const { card } = locked;
  const { outcome, write } = gradedReview(
    student,
    card,
    fsrsOf(locked.deck),
    review.grade,
    review.reviewedAt,
    at,
    true,
  );
  const updated = reviewedCard(card, outcome, at);
  // A review that moved the card tells of it (card.updated); the review log is append-only and no event.
  const event = outcome.applied ? () => cardEvent('card.updated', student, updated, at) : undefined;
  if (!locked.readinessFollows) {
    // Nothing readiness follows (no upcoming exam, no state pushed): no move to compare for. Should an exam have come
    // while the review waited for the student's lock, the write says so, and readiness is compared in full.
    const { review: logged, readinessFollows } = await writeGradedReviewFollowed(trx, write, window.fromDate);
    await progress(trx, student, at, { reviewed: readinessFollows ? undefined : null, event });
    return { review: logged, card: updated };
  }
  const { review: logged, facts } = await writeGradedReviewWithFacts(trx, write, window);
  await progress(trx, student, at, {
    reviewed: {
      before: facts,
      review: {
        deck_id: card.deck_id,
        before: memoryOf(card),
        after: memoryOf(updated),
        in_window: review.reviewedAt >= window.since,
      },
    },
    event,
  });
  return { review: logged, card: updated };
}

/**
 * A batch of reviews, all or none, applied in the order they happened: by `reviewedAt` (the order given among equal
 * times), whatever order they came in. The results are in the order given. `unknown`: the positions of the reviews
 * whose card is not the student's, and nothing is written.
 */
export async function recordReviews(
  trx: Db,
  student: Student,
  reviews: GradedCard[],
  at: Date,
): Promise<{ reviewed: RecordedReview[] } | { unknown: number[] }> {
  const cards = new Map(
    (await lockCards(trx, student.user_id, [...new Set(reviews.map((r) => r.card_id))])).map((card) => [card.id, card]),
  );
  const unknown = reviews.flatMap((review, index) => (cards.has(review.card_id) ? [] : [index]));
  if (unknown.length > 0) return { unknown };
  const schedulers = await deckSchedulers(trx, student.user_id, [
    ...new Set([...cards.values()].map((card) => card.deck_id)),
  ]);
  const reviewed: RecordedReview[] = new Array(reviews.length);
  const studyDays = new Set<string>();
  const moved = new Set<string>();
  const inOrder = reviews
    .map((review, index) => ({ ...review, index }))
    .sort((a, b) => a.reviewedAt.getTime() - b.reviewedAt.getTime() || a.index - b.index);
  for (const review of inOrder) {
    const current = cards.get(review.card_id)!;
    const recorded = await applyReview(
      trx,
      student,
      current,
      fsrsOf(schedulers.get(current.deck_id)),
      review.grade,
      review.reviewedAt,
      at,
      studyDays,
    );
    // An applied review gives a new card; one that did not move it (older than the card's last) the same.
    if (recorded.card !== current) moved.add(review.card_id);
    cards.set(review.card_id, recorded.card);
    reviewed[review.index] = recorded;
  }
  await progress(trx, student, at);
  // One card.updated per card the batch moved, as the batch left it.
  await emitEvents(
    trx,
    [...moved].map((id) => cardEvent('card.updated', student, cards.get(id)!, at)),
  );
  return { reviewed };
}

/**
 * Applies one review to a locked card (domain/srs.ts reviewStep), logs it, and counts the study day and its xp, in one
 * statement. `studyDays` are the days this request recorded already (a batch records each of its days once, in time
 * order).
 */
async function applyReview(
  trx: Db,
  student: Student,
  card: CardRow,
  fsrs: FsrsParameters | undefined,
  grade: Grade,
  reviewedAt: Date,
  at: Date,
  studyDays: Set<string>,
): Promise<RecordedReview> {
  const { outcome, write } = gradedReview(
    student,
    card,
    fsrs,
    grade,
    reviewedAt,
    at,
    !studyDays.has(localDate(reviewedAt, student.time_zone)),
  );
  studyDays.add(write.day);
  const review = await writeGradedReview(trx, write);
  return { review, card: reviewedCard(card, outcome, at) };
}

/** The scheduling step of a review (domain/srs.ts reviewStep) and the write that records it (db/queries/graded-review.ts). */
function gradedReview(
  student: Student,
  card: CardRow,
  fsrs: FsrsParameters | undefined,
  grade: Grade,
  reviewedAt: Date,
  at: Date,
  studyDay: boolean,
) {
  const outcome: ReviewOutcome = {
    grade,
    reviewed_at: reviewedAt,
    ...reviewStep(card, grade, reviewedAt, student.time_zone, fsrs),
  };
  const day = localDate(reviewedAt, student.time_zone);
  const write: GradedReviewWrite = {
    userId: student.user_id,
    cardId: card.id,
    outcome,
    at,
    ...studyInStatement({ day, claim: reviewClaim(card.id, grade, day) }, studyDay),
  };
  return { outcome, write };
}

/** The card as the review's write leaves it: moved when the review was applied, as it was otherwise. */
function reviewedCard(card: CardRow, outcome: ReviewOutcome, at: Date): CardRow {
  if (!outcome.applied) return card;
  const { ease, repetitions, interval_days, next_due_at, reviewed_at, fsrs_state } = outcome;
  return {
    ...card,
    ease,
    repetitions,
    interval_days,
    next_due_at,
    last_reviewed_at: reviewed_at,
    fsrs_state,
    updated_at: at,
  };
}

function memoryOf(card: CardRow) {
  return { interval_days: card.interval_days, last_reviewed_ms: card.last_reviewed_at?.getTime() ?? null };
}

/** The FSRS parameters a review of a card of `deck` schedules with, or undefined for an SM-2 deck. */
function fsrsOf(
  deck: { scheduler: string; fsrs_parameters: FsrsParameters | null } | undefined,
): FsrsParameters | undefined {
  return deck?.scheduler === 'fsrs' ? fsrsParameters(deck.fsrs_parameters) : undefined;
}
