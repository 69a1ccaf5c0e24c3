// What earns xp, and how much: the rules as data and pure functions (no HTTP, no SQL). db/queries/xp.ts writes the
// ledger that makes each award happen at most once; this module decides the amounts. The same table is in the spec
// (UserProfile.xp) and docs/features.md#xp-and-streaks.
//
// | action                                   | xp            | at most                                    |
// |------------------------------------------|---------------|--------------------------------------------|
// | a card review, grade 0–2 / 3 / 4–5       | 1 / 2 / 3     | once per card per local day                |
// | a task completed by its due time         | 10            | once per task, ever (reopening undoes none) |
// | an exam's readiness reaching 50/75/90 %  | 20 / 30 / 50  | once per exam and milestone, ever          |
// | a room's focus session that finished     | 1 per 5 min   | once per session and member                |
// Reviews, tasks and focus sessions together earn at most DAILY_CAP xp per local day; milestones are outside the cap
// (there are three per exam, ever). Farming is pointless: a second review of a card the same day, a re-close of a
// reopened task or a readiness that dips and recovers all earn 0.

export type XpSource = 'review' | 'task' | 'readiness' | 'focus';

/** The most xp reviews and tasks earn together in one local day of the student. */
export const DAILY_CAP = 150;
/** A completed task earns this when it is completed no later than it was due. */
export const TASK_ON_TIME_XP = 10;
/** A finished focus session earns this per whole FOCUS_XP_MINUTES of its duration (25 minutes: 5 xp). */
export const FOCUS_XP_MINUTES = 5;
/** Readiness percent thresholds of an exam and what reaching each earns, lowest first. */
export const READINESS_MILESTONES: ReadonlyArray<{ percent: number; xp: number }> = [
  { percent: 50, xp: 20 },
  { percent: 75, xp: 30 },
  { percent: 90, xp: 50 },
];

/** One thing that may earn xp: the ledger key that makes it count once, and its amount before the daily cap. */
export interface XpClaim {
  key: string;
  source: XpSource;
  amount: number;
  /** The student's local date of the action (YYYY-MM-DD): the day the cap counts it in. */
  localDate: string;
}

/** A review of a card graded `grade` (0..5) on the student's local day `localDate`. */
export function reviewClaim(cardId: string, grade: number, localDate: string): XpClaim {
  const amount = grade >= 4 ? 3 : grade === 3 ? 2 : 1;
  return { key: `review:${cardId}:${localDate}`, source: 'review', amount, localDate };
}

/** A task closed at `completedAt`; late completion earns nothing (but still takes the task's one key). */
export function taskClaim(taskId: string, dueAt: Date, completedAt: Date, localDate: string): XpClaim {
  return { key: `task:${taskId}`, source: 'task', amount: completedAt <= dueAt ? TASK_ON_TIME_XP : 0, localDate };
}

/** A room's focus session that ran its whole duration (`durationMs`), for one member of the room. */
export function focusClaim(sessionId: string, durationMs: number, localDate: string): XpClaim {
  return {
    key: `focus:${sessionId}`,
    source: 'focus',
    amount: Math.floor(durationMs / (FOCUS_XP_MINUTES * 60_000)),
    localDate,
  };
}

/** The milestones an exam's readiness at `percent` has reached, each one claim. */
export function readinessClaims(examId: string, percent: number, localDate: string): XpClaim[] {
  return READINESS_MILESTONES.filter((m) => percent >= m.percent).map((m) => ({
    key: `readiness:${examId}:${m.percent}`,
    source: 'readiness' as const,
    amount: m.xp,
    localDate,
  }));
}

/** The sources that count toward the daily cap. */
export const CAPPED_SOURCES: readonly XpSource[] = ['review', 'task', 'focus'];

export function isCapped(source: XpSource): boolean {
  return CAPPED_SOURCES.includes(source);
}

/** What a capped claim actually earns when `earnedToday` capped xp was already awarded on its day. */
export function cappedAmount(amount: number, earnedToday: number): number {
  return Math.max(0, Math.min(amount, DAILY_CAP - earnedToday));
}
