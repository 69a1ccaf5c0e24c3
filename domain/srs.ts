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

export type Grade = SuperMemoGrade;

/** The SM-2 parameters of a card, as stored (flashcard_cards) and returned by the API. */
export interface SrsState {
  ease: number;
  repetitions: number;
  interval_days: number;
}

/** A card that was never reviewed. */
export const NEW_CARD: SrsState = { ease: 2.5, repetitions: 0, interval_days: 0 };

/** The parameters after one review graded `grade` (0..5). */
export function sm2Step(state: SrsState, grade: Grade): SrsState {
  const next = supermemo({ interval: state.interval_days, repetition: state.repetitions, efactor: state.ease }, grade);
  return { ease: next.efactor, repetitions: next.repetition, interval_days: next.interval };
}

/**
 * When the card is due next: `intervalDays` calendar days after the review, at the same wall-clock time in the
 * student's time zone (so a daily card does not drift by an hour across a DST change).
 */
export function nextDueAt(reviewedAt: Date, intervalDays: number, timeZone: string): Date {
  return DateTime.fromJSDate(reviewedAt, { zone: timeZone }).plus({ days: intervalDays }).toJSDate();
}
