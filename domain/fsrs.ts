// The FSRS step of a flashcard review, for decks whose scheduler is 'fsrs'. The arithmetic is ts-fsrs's (5.4.2, FSRS-6
// with its default weights unless the deck sets its own); this module maps our 0–5 grades onto FSRS ratings, keeps
// the card's FSRS memory as a plain object we store (flashcard_cards.fsrs_state) and fills in the deck's parameters.
// Fuzz is off, so a review is reproducible (and testable against the library's published vectors).
//
// Switching a deck's scheduler: each card keeps both its SM-2 parameters and its FSRS memory. Under FSRS, a card
// with no FSRS memory yet starts as a new FSRS card at its next review (its SM-2 history is not converted); its due
// date stays until then. Back under SM-2, the card continues from the SM-2 parameters it had (FSRS reviews leave
// them untouched), and its FSRS memory waits for a switch back.
import { createEmptyCard, fsrs, generatorParameters, Rating, State, type Card, type Grade as FsrsGrade } from 'ts-fsrs';

/** The FSRS parameters of a deck, as stored and returned (spec: FsrsParameters). */
export interface FsrsParameters {
  request_retention: number;
  maximum_interval: number;
  w: number[];
}

/** The FSRS memory of a card, as stored and returned (spec: CardFsrsState). */
export interface FsrsCardState {
  state: 'new' | 'learning' | 'review' | 'relearning';
  stability: number;
  difficulty: number;
  reps: number;
  lapses: number;
  learning_steps: number;
  /** Days the last FSRS review scheduled (0 while in a learning step of minutes). */
  scheduled_days: number;
  last_review: string | null;
}

const DEFAULTS = generatorParameters({ enable_fuzz: false });

/** The deck's parameters with ts-fsrs's defaults for what the student did not set. */
export function fsrsParameters(given: Partial<FsrsParameters> | null | undefined): FsrsParameters {
  return {
    request_retention: given?.request_retention ?? DEFAULTS.request_retention,
    maximum_interval: given?.maximum_interval ?? DEFAULTS.maximum_interval,
    w: given?.w ?? [...DEFAULTS.w],
  };
}

/** Our SM-2 grades on FSRS's four ratings: a failed recall (0–2) is Again, 3 Hard, 4 Good, 5 Easy. */
export function ratingOf(grade: number): FsrsGrade {
  return grade < 3 ? Rating.Again : grade === 3 ? Rating.Hard : grade === 4 ? Rating.Good : Rating.Easy;
}

const STATES: Record<State, FsrsCardState['state']> = {
  [State.New]: 'new',
  [State.Learning]: 'learning',
  [State.Review]: 'review',
  [State.Relearning]: 'relearning',
};
const STATE_OF = Object.fromEntries(Object.entries(STATES).map(([k, v]) => [v, Number(k) as State])) as Record<
  FsrsCardState['state'],
  State
>;

/** The scheduler of each parameters object, built once: a replay of a card's log steps many reviews with one. */
const schedulers = new WeakMap<FsrsParameters, ReturnType<typeof fsrs>>();

/** One FSRS review: the card's new memory, when it is due next and the interval in whole days. */
export function fsrsStep(stored: FsrsCardState | null, grade: number, reviewedAt: Date, parameters: FsrsParameters) {
  let scheduler = schedulers.get(parameters);
  if (!scheduler) schedulers.set(parameters, (scheduler = fsrs({ ...parameters, enable_fuzz: false })));
  const { card } = scheduler.next(toCard(stored, reviewedAt), reviewedAt, ratingOf(grade));
  return { fsrs_state: fromCard(card), next_due_at: card.due, interval_days: card.scheduled_days };
}

function toCard(stored: FsrsCardState | null, at: Date): Card {
  if (!stored) return createEmptyCard(at);
  const lastReview = stored.last_review ? new Date(stored.last_review) : undefined;
  return {
    ...createEmptyCard(at),
    stability: stored.stability,
    difficulty: stored.difficulty,
    reps: stored.reps,
    lapses: stored.lapses,
    learning_steps: stored.learning_steps,
    scheduled_days: stored.scheduled_days,
    state: STATE_OF[stored.state],
    ...(lastReview ? { last_review: lastReview } : {}),
  };
}

function fromCard(card: Card): FsrsCardState {
  return {
    state: STATES[card.state],
    stability: card.stability,
    difficulty: card.difficulty,
    reps: card.reps,
    lapses: card.lapses,
    learning_steps: card.learning_steps,
    scheduled_days: card.scheduled_days,
    last_review: card.last_review ? card.last_review.toISOString() : null,
  };
}
