// Readiness's facts as the last review written alone of each student readiness follows left them (its review applied,
// its day studied), for the window and local day it asked about, under the version of the facts its write left: her
// next review, in line or seconds later (a study session is card after card), reads its card only, and the gate checks
// the version as it checks that of facts read with the card. Facts another write moved since (another process's
// review, a task completed, an exam changed) cost the review one try, never a wrong write, so the memory may forget
// anything at any time: it is bounded by forgetting the oldest.
//
// The facts hold the memory of every card of the exams' decks: bounded by students alone, a thousand students with
// large decks would hold millions of cards. So the cards held in all are bounded too (a card's memory is two numbers),
// and facts over that bound alone are not kept at all: that student's next review reads them again, as it would have
// without this memory.
import type { FactsBeforeReview, FactsQuestion } from '../../db/queries/readiness.ts';

/** How much one process keeps: students, and the cards of their facts in all. */
export interface FactsLeftBounds {
  students: number;
  cards: number;
}

/**
 * The process's bounds: 1,000 students' facts, and 200,000 cards' memories in all (a card's is an object of two numbers,
 * ~64 bytes in V8: ~13 MB at the bound).
 */
export const FACTS_LEFT_BOUNDS: FactsLeftBounds = { students: 1_000, cards: 200_000 };

/** Facts with the version of the student's facts they are (db/queries/readiness.ts readinessFactsVersion). */
export interface VersionedFacts {
  facts: FactsBeforeReview;
  version: number;
}

interface Kept extends VersionedFacts {
  question: FactsQuestion;
  cards: number;
}

export class FactsLeft {
  private readonly kept = new Map<string, Kept>();
  private cards = 0;

  constructor(private readonly bounds: FactsLeftBounds = FACTS_LEFT_BOUNDS) {}

  /** The facts the student's last review left, when they answer this review's question; forgotten either way. */
  take(userId: string, question: FactsQuestion): VersionedFacts | undefined {
    const known = this.forget(userId);
    return known && sameQuestion(known.question, question) ? { facts: known.facts, version: known.version } : undefined;
  }

  /** Keeps the student's facts for her next review, forgetting the oldest students' while a bound would be passed. */
  keep(userId: string, question: FactsQuestion, { facts, version }: VersionedFacts): void {
    this.forget(userId);
    const cards = facts.exams.reduce((sum, exam) => sum + exam.cards.length, 0);
    if (cards > this.bounds.cards) return;
    while (this.kept.size >= this.bounds.students || this.cards + cards > this.bounds.cards)
      this.forget(this.kept.keys().next().value!);
    this.kept.set(userId, { question, facts, version, cards });
    this.cards += cards;
  }

  /** What is held now: students, and the cards of their facts in all. */
  get held(): { students: number; cards: number } {
    return { students: this.kept.size, cards: this.cards };
  }

  private forget(userId: string): Kept | undefined {
    const known = this.kept.get(userId);
    if (known) {
      this.kept.delete(userId);
      this.cards -= known.cards;
    }
    return known;
  }
}

function sameQuestion(a: FactsQuestion, b: FactsQuestion): boolean {
  return (
    a.fromDate === b.fromDate &&
    a.limit === b.limit &&
    a.zone === b.zone &&
    a.since.getTime() === b.since.getTime() &&
    a.dayStart.getTime() === b.dayStart.getTime() &&
    a.dayEnd.getTime() === b.dayEnd.getTime()
  );
}
