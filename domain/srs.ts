// The SM-2 step of a flashcard review, as one pure function over the card's stored parameters. The arithmetic is
// the `supermemo` library's (2.0.23); this module only maps our column names onto it and places the next review
// on the calendar. Its reading of Wozniak's SM-2 description, pinned by test/unit/srs.test.ts:
// - intervals 1, 6, then the previous interval × the ease the card had before this review;
// - the ease moves by 0.1 - (5 - q)(0.08 + (5 - q) 0.02) after every review, failed ones too, floor 1.3;
// - a grade below 3 restarts the card (repetitions 0, interval 1) and keeps the ease it just computed;
// - a fractional interval is rounded to the nearest day, where the description says "round it up". We keep the
//   library's rounding: the ease is a binary double (2.7 + 0.1 = 2.8000000000000003), so rounding up would turn
//   15 × 2.8000000000000003 = 42.00000000000001 into 43 days; rounding to nearest never moves a day for float noise.
import { DateTime } from 'luxon';
import { supermemo, type SuperMemoGrade } from 'supermemo';
import { fsrsStep, type FsrsCardState, type FsrsParameters } from './fsrs.ts';

export type Grade = SuperMemoGrade;

/** The SM-2 parameters of a card, as stored (flashcard_cards) and returned by the API. */
export interface SrsState {
  ease: number;
  repetitions: number;
  interval_days: number;
}

/**
 * The longest interval SM-2 may choose: 100 years, Anki's and ts-fsrs's default maximum. Without it, a card passed
 * again and again grows its interval geometrically until the next review falls past the year 9999, which no
 * timestamp can hold (the review was refused with a 500).
 */
export const MAX_INTERVAL_DAYS = 36_500;

/** A card that was never reviewed. */
export const NEW_CARD: SrsState = { ease: 2.5, repetitions: 0, interval_days: 0 };

/** The parameters after one review graded `grade` (0..5). */
export function sm2Step(state: SrsState, grade: Grade): SrsState {
  const next = supermemo({ interval: state.interval_days, repetition: state.repetitions, efactor: state.ease }, grade);
  return {
    ease: next.efactor,
    repetitions: next.repetition,
    interval_days: Math.min(next.interval, MAX_INTERVAL_DAYS),
  };
}

/**
 * When the card is due next: `intervalDays` calendar days after the review, at the same wall-clock time in the
 * student's time zone (so a daily card does not drift by an hour across a DST change).
 */
export function nextDueAt(reviewedAt: Date, intervalDays: number, timeZone: string): Date {
  return DateTime.fromJSDate(reviewedAt, { zone: timeZone }).plus({ days: intervalDays }).toJSDate();
}

/** How far back an offline review may be dated (spec: NewReview.reviewed_at). */
export const OFFLINE_REVIEW_WINDOW_DAYS = 7;

/** Whether `reviewedAt` is inside the offline window ending at `now` (not in the future, at most 7 days back). */
export function isWithinOfflineWindow(reviewedAt: Date, now: Date): boolean {
  return reviewedAt <= now && now.getTime() - reviewedAt.getTime() <= OFFLINE_REVIEW_WINDOW_DAYS * 86_400_000;
}

/** A card as a review sees it: its SM-2 parameters, when it is due and when it was last reviewed. */
export interface ReviewedCard extends SrsState {
  next_due_at: Date;
  last_reviewed_at: Date | null;
  /** The card's FSRS memory (domain/fsrs.ts); null before its first FSRS review. */
  fsrs_state: FsrsCardState | null;
}

/** What one review does to a card: the parameters it leaves. */
export interface ReviewStep extends SrsState {
  next_due_at: Date;
  fsrs_state: FsrsCardState | null;
}

/**
 * The review of `card` graded `grade` at `reviewedAt`, taken on the card as it is: right for a review after the
 * card's last one (see `arrivesInOrder`). `fsrs` (the deck's FSRS parameters) schedules the card with FSRS instead of
 * SM-2: its FSRS memory moves, its SM-2 ease and repetitions stay as they were (see domain/fsrs.ts on switching); under
 * SM-2 its FSRS memory stays.
 */
export function reviewStep(
  card: ReviewedCard,
  grade: Grade,
  reviewedAt: Date,
  timeZone: string,
  fsrs?: FsrsParameters,
): ReviewStep {
  const { ease, repetitions, fsrs_state } = card;
  if (fsrs) return { ease, repetitions, ...fsrsStep(fsrs_state, grade, reviewedAt, fsrs) };
  const step = sm2Step(card, grade);
  return { ...step, next_due_at: nextDueAt(reviewedAt, step.interval_days, timeZone), fsrs_state };
}

/** A review of the card's log as a replay reads it. */
export interface LoggedReview {
  id: string;
  grade: Grade;
  reviewed_at: Date;
}

/** The log's order: by `reviewed_at`, then by the review's id (any stable order would do; the id is in the log). */
export function logOrder(a: LoggedReview, b: LoggedReview): number {
  return a.reviewed_at.getTime() - b.reviewed_at.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/**
 * Whether review `id` at `reviewedAt` comes after every review the card has had, so that its step on the card as it
 * is gives what the log's order gives. `last` is the card's last review, its id when known (a review of this request);
 * at the same instant with an unknown id the order is not known, and the review is replayed.
 */
export function arrivesInOrder(last: { at: Date | null; id?: string }, reviewedAt: Date, id: string): boolean {
  if (!last.at || reviewedAt > last.at) return true;
  return reviewedAt.getTime() === last.at.getTime() && last.id !== undefined && last.id < id;
}

/**
 * The card as its review log makes it: every logged review, in the log's order (logOrder), stepped with today's
 * scheduler from the card's initial state. A review that arrives after a later one (two devices studying offline)
 * takes its place in time this way, so the card is the same whatever order the reviews arrived in. The replay starts
 * from the initial state because the append-only log is the only complete record: the card holds only its latest
 * state, and a logged review the parameters it gave when it arrived, which go stale as soon as an earlier review
 * arrives after it (and hold no FSRS memory). What today's scheduler does not move stays as the card has it: an FSRS
 * deck's replay keeps the card's SM-2 ease and repetitions, an SM-2 deck's its FSRS memory (see domain/fsrs.ts on
 * switching). Returns the step of review `kept` (the one that arrived) and the card after the last review. The log
 * is not empty. An SM-2 step's due date is placed on the calendar (Luxon, most of a step's CPU) only where it is
 * returned: the replay's cost grows with the card's reviews.
 */
export function replayReviews(
  card: ReviewedCard,
  log: readonly LoggedReview[],
  timeZone: string,
  fsrs: FsrsParameters | undefined,
  kept: string,
): { step: ReviewStep; card: ReviewedCard } {
  let state: ReviewedCard = fsrs
    ? { ...card, interval_days: NEW_CARD.interval_days, fsrs_state: null }
    : { ...card, ...NEW_CARD };
  let step: ReviewStep | undefined;
  const ordered = [...log].sort(logOrder);
  for (const [index, review] of ordered.entries()) {
    const placed = review.id === kept || index === ordered.length - 1;
    const next: ReviewStep =
      fsrs || placed
        ? reviewStep(state, review.grade, review.reviewed_at, timeZone, fsrs)
        : { ...state, ...sm2Step(state, review.grade) };
    if (review.id === kept) step = next;
    state = { ...next, last_reviewed_at: review.reviewed_at };
  }
  if (!step) throw new Error(`replayReviews: review ${kept} is not in the log`);
  return { step, card: state };
}
