// What follows when a student studied, written once for every study action: the study day (the streak), the xp
// within the daily cap, the readiness move and the event that tells of the action, in the action's transaction. A
// change that studies nothing but may move readiness (a card added, an exam or a deck removed) calls it too, so that
// readiness moves from here only. A graded review writes its study day and xp in its own statement for speed
// (db/queries/graded-review.ts); `studyInStatement` gives that statement the same day, claim and cap.
import type { Db } from '../../db/connect.ts';
import { recordStudyDay } from '../../db/queries/streak.ts';
import { awardXp } from '../../db/queries/xp.ts';
import { CAPPED_SOURCES, DAILY_CAP, type XpClaim, type XpSource } from '../../domain/xp.ts';
import type { Student } from '../../server/auth/principal.ts';
import { emitEvent, type EmittedEvent, type EventType } from '../events/emit.ts';
import { readinessMoved, readinessMovedByReview, type ReviewedFacts } from '../readiness/readiness.ts';

/** The study readiness counts (db/queries/exams.ts studyDays: reviews and completed tasks); focus sessions are not. */
const COUNTED_BY_READINESS: ReadonlySet<XpSource> = new Set(['review', 'task']);

/** The day studied, in the student's zone, and the xp it claims. */
export interface Study {
  day: string;
  claim: XpClaim;
}

export interface StudyAction<T extends EventType> {
  /** Absent for a change that studies nothing but may move readiness. */
  studied?: Study;
  /**
   * A graded review whose statement recorded its study and returned what readiness compares, as it was before; null
   * when the statement found nothing readiness follows (no upcoming exam, no state pushed), so nothing can move.
   */
  reviewed?: ReviewedFacts | null;
  /** The event that tells of the action, given the xp it earned. */
  event?: (xpAwarded: number) => EmittedEvent<T>;
}

/** Records what follows a study action in its transaction; returns the xp it earned (0: capped, or earned before). */
export async function progress<T extends EventType>(
  trx: Db,
  student: Student,
  at: Date,
  action: StudyAction<T> = {},
): Promise<number> {
  let xp = 0;
  if (action.studied) {
    await recordStudyDay(trx, student.user_id, action.studied.day, at);
    xp = await awardXp(trx, student.user_id, action.studied.claim, at);
  }
  if (action.reviewed) await readinessMovedByReview(trx, student, at, action.reviewed);
  else if (action.reviewed === null) {
    // Nothing to move: see StudyAction.reviewed.
  } else if (!action.studied || COUNTED_BY_READINESS.has(action.studied.claim.source)) {
    await readinessMoved(trx, student, at);
  }
  if (action.event) await emitEvent(trx, action.event(xp));
  return xp;
}

/** The study day and xp of an action that records them in its own statement (`first`: the day is not counted yet). */
export function studyInStatement({ day, claim }: Study, first: boolean) {
  return {
    studyDay: first,
    day,
    xp: { key: claim.key, source: claim.source, amount: claim.amount, cap: DAILY_CAP, cappedSources: CAPPED_SOURCES },
  };
}
