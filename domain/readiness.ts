// Readiness for an exam: one pure, documented formula (also in spec/components/schemas/Readiness.yaml), used by
// the exam plans and by the daily loop.
//
//   memory      = mean over the linked decks' cards of R = exp(-t / S), t = days since the card's last review,
//                 S = its SM-2 interval in days; a card never reviewed counts 0. No cards: no data (null).
//   coverage    = completed prep tasks / linked prep tasks. No tasks: no data (null).
//   consistency = study days among the last 14 (a day with a review or a completed task) / 14.
//   percent     = round(100 × (0.5 memory + 0.3 coverage + 0.2 consistency)), the weights of components without
//                 data left out and the others scaled up to sum to 1.
//
// exp(-t/S) treats the interval SM-2 chose as the memory's time constant: right after a review R is 1, when the
// card falls due R is 1/e ≈ 0.37, and a card left twice its interval is at 0.14.

export const READINESS_WEIGHTS = { memory: 0.5, coverage: 0.3, consistency: 0.2 } as const;
export const CONSISTENCY_WINDOW_DAYS = 14;
const DAY_MS = 86_400_000;

export interface ReadinessCard {
  interval_days: number;
  last_reviewed_at: Date | null;
}

export interface ReadinessInput {
  now: Date;
  /** The cards of the decks linked to the exam. */
  cards: readonly ReadinessCard[];
  /** The prep tasks linked to the exam. */
  tasks: { total: number; completed: number };
  /** Distinct days with a review or a completed task among the last CONSISTENCY_WINDOW_DAYS, today included. */
  study_days: number;
}

export interface Readiness {
  percent: number;
  memory: number | null;
  coverage: number | null;
  consistency: number;
  /** The weights applied, after leaving out components without data. */
  weights: { memory: number; coverage: number; consistency: number };
  details: {
    cards: number;
    cards_reviewed: number;
    tasks: number;
    tasks_completed: number;
    study_days: number;
    window_days: number;
  };
}

/** The estimated probability of recalling the card now: exp(-t/S); 0 for a card never reviewed. */
export function retrievability(card: ReadinessCard, now: Date): number {
  if (card.last_reviewed_at === null || card.interval_days <= 0) return 0;
  // A review stamped a little in the future (clock skew between writers) counts as just now.
  const days = Math.max(0, (now.getTime() - card.last_reviewed_at.getTime()) / DAY_MS);
  return Math.exp(-days / card.interval_days);
}

export function readiness(input: ReadinessInput): Readiness {
  const { cards, tasks, now } = input;
  const memory =
    cards.length > 0 ? cards.reduce((sum, card) => sum + retrievability(card, now), 0) / cards.length : null;
  const coverage = tasks.total > 0 ? Math.min(tasks.completed, tasks.total) / tasks.total : null;
  const study_days = Math.min(Math.max(input.study_days, 0), CONSISTENCY_WINDOW_DAYS);
  const consistency = study_days / CONSISTENCY_WINDOW_DAYS;

  const present = {
    memory: memory === null ? 0 : READINESS_WEIGHTS.memory,
    coverage: coverage === null ? 0 : READINESS_WEIGHTS.coverage,
    consistency: READINESS_WEIGHTS.consistency,
  };
  const total = present.memory + present.coverage + present.consistency;
  const weights = {
    memory: present.memory / total,
    coverage: present.coverage / total,
    consistency: present.consistency / total,
  };
  const score =
    100 * (weights.memory * (memory ?? 0) + weights.coverage * (coverage ?? 0) + weights.consistency * consistency);

  return {
    // Rounded half up on the value to 6 decimals, so binary noise (57.49999999999999 for 57.5) does not decide it.
    percent: Math.round(Math.round(score * 1e6) / 1e6),
    memory,
    coverage,
    consistency,
    weights,
    details: {
      cards: cards.length,
      cards_reviewed: cards.filter((card) => card.last_reviewed_at !== null).length,
      tasks: tasks.total,
      tasks_completed: tasks.completed,
      study_days,
      window_days: CONSISTENCY_WINDOW_DAYS,
    },
  };
}
