// A graded review is one write of several steps: lock the card, take the scheduling step of its deck's scheduler
// (domain/srs.ts: SM-2, or FSRS with the deck's parameters), update the card, log the review, count the study day and
// its xp, tell of the card (card.updated) and move readiness (services/progress/). It is the same for one review and
// for a batch synced after offline study, and for the sync's push (services/sync/commands.ts), in the caller's
// transaction (an idempotent request's), so a crash leaves all of it or none and concurrent reviews of one card apply
// one after the other. The card is a function of its review log: a review that arrives after a later one (two devices
// studying offline) is replayed into its place (domain/srs.ts replayReviews), at the cost of one more statement.
//
// A review given no transaction (a request without an Idempotency-Key) is two statements in autocommit: the card read
// without locks, then the writes as one statement whose gate takes the locks and checks that the card is still the one
// read (db/queries/graded-review.ts). The student's lock is then held for one statement, not for a transaction's
// round trips, which is what concurrent reviews of one student queued on. When readiness follows the student, the
// read brings readiness's facts too, with their version, the review is decided on them before it writes (the usual
// review moves no exam's readiness, and then has nothing more to record), and the gate checks under the locks that
// their version is the same, as it checks the card's. When another write moved the card or the facts in between, the
// review starts over.
import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/connect.ts';
import {
  deckSchedulers,
  lockCardForReview,
  lockCards,
  readCardForReview,
  type CardRow,
} from '../../db/queries/flashcards.ts';
import { retriedTransaction } from '../../db/student-transaction.ts';
import {
  cardReviewLog,
  writeGradedReview,
  writeGradedReviewAlone,
  writeGradedReviewFollowed,
  writeGradedReviewWithFacts,
  type GradedReviewWrite,
  type ReviewRow,
} from '../../db/queries/graded-review.ts';
import type { FactsQuestion } from '../../db/queries/readiness.ts';
import { fsrsParameters, type FsrsParameters } from '../../domain/fsrs.ts';
import { arrivesInOrder, logOrder, replayReviews, reviewStep, type Grade, type ReviewStep } from '../../domain/srs.ts';
import { localDate, studentDay } from '../../domain/student-day.ts';
import { reviewClaim } from '../../domain/xp.ts';
import { progress, studyInStatement } from '../progress/progress.ts';
import { factsAfterUnmovingReview, readinessWindow, type ReviewedFacts } from '../readiness/readiness.ts';
import { emitEvents, outboxRow } from '../events/emit.ts';
import { keyedLine } from '../leases/keyed-line.ts';
import { cardEvent } from './writes.ts';
import { FactsLeft } from './facts-left.ts';
import type { Student } from '../../server/auth/principal.ts';

/** A review as logged, and its card as it is after it. */
export interface RecordedReview {
  review: ReviewRow;
  card: CardRow;
}

/** A review of a batch: which card, the grade, and when it happened (earlier offline), or undefined for now. */
export interface GradedCard {
  card_id: string;
  grade: Grade;
  reviewedAt: Date | undefined;
}

/** The card's last review: when, and its id when this request knows it (it wrote it, or read the card's log). */
interface LastReview {
  at: Date | null;
  id?: string;
}

/**
 * Tries of a review written alone before it takes its locks in a transaction instead: each try that finds the card
 * moved since its read (another process's review of the card, or another write of it) costs two statements, and the
 * locked transaction never has to start over.
 */
const ALONE_TRIES = 3;

/**
 * One student's reviews given no transaction, put in line in this process: a burst of them (several devices, or
 * several tabs, reviewing at once) waits in memory for the one before it, instead of reading the card all at once and
 * then queueing on the student's lock, where all but the first would find the card moved and start over. Past this
 * many, a review runs at once: its gate keeps it right, at the cost of a try.
 */
const reviewLine = keyedLine(64);

/** A card as a review written alone reads it (db/queries/flashcards.ts readCardForReview). */
type CardToReview = NonNullable<Awaited<ReturnType<typeof readCardForReview>>>;

/**
 * The card the last review written alone of each student left, kept for the next review in the student's line only
 * (set while another review waits, taken by the next one): that review then starts from it instead of reading the
 * card again, so a burst of reviews of one card costs one statement each. The gate's version check keeps it right
 * when another process wrote the card meanwhile.
 */
const leftInLine = new Map<string, CardToReview>();

/** Readiness's facts as each student's last review written alone left them, for her next review (facts-left.ts). */
const factsLeft = new FactsLeft();

/**
 * One review of the student's card; undefined when the student has no card with this id (nothing is written). In a
 * transaction (an idempotent request's, a sync push's), the review takes its locks with the card's read and writes
 * in it (recordLockedReview). Given the pool, it makes its own writes atomic: two statements in autocommit (see the
 * top of this file).
 */
export async function recordReview(
  db: Db,
  student: Student,
  review: GradedCard,
  at: Date,
): Promise<RecordedReview | undefined> {
  if (db.isTransaction) return recordLockedReview(db, student, review, at);
  return (
    reviewLine.tryRun(student.user_id, () => recordReviewAlone(db, student, review, at, true)) ??
    recordReviewAlone(db, student, review, at, false)
  );
}

/**
 * The review as one statement after an unlocked read of the card, tried again when another write moved the card (or
 * readiness's facts) in between; in a transaction after ALONE_TRIES. When readiness follows the student, the read
 * brings readiness's facts, and the review is decided on them: one that moves no exam's readiness is written alone,
 * its gate checking the facts under the locks; one that moves readiness is written by the same statement first in a
 * transaction, which then records the move. The facts the student's last review left (factsLeft) spare reading
 * them again. `inLine`: it runs in the student's line (reviewLine), so it may start from the card the review before it left
 * (leftInLine).
 */
async function recordReviewAlone(
  db: Db,
  student: Student,
  review: GradedCard,
  at: Date,
  inLine: boolean,
): Promise<RecordedReview | undefined> {
  const window = readinessWindow(at, student.time_zone);
  const day = studentDay(review.reviewedAt ?? at, student.time_zone);
  const question: FactsQuestion = { ...window, dayStart: day.start, dayEnd: day.end };
  const id = randomUUID();
  let left = inLine ? takeLeft(student.user_id, review.card_id) : undefined;
  let known = factsLeft.take(student.user_id, question);
  for (let tries = 0; tries < ALONE_TRIES; tries++) {
    const read = left ?? (await readCardForReview(db, student.user_id, review.card_id, question, !known));
    const versioned = read?.facts ? { facts: read.facts, version: read.factsVersion! } : known;
    const facts = versioned?.facts;
    left = known = undefined;
    if (!read) return undefined;
    const { write, card } = await gradedReview(
      db,
      student,
      read.card,
      { at: read.card.last_reviewed_at },
      fsrsOf(read.deck),
      { id, grade: review.grade, reviewed_at: review.reviewedAt },
      at,
      { studyDay: () => true, tells: true },
    );
    const reviewedAt = write.outcome.reviewed_at;
    // The facts were asked about the review's day; a review placed just after the card's last (gradedReview) can
    // fall on the next day, which they do not answer.
    if (facts && !(reviewedAt >= day.start && reviewedAt < day.end)) break;
    const reviewed: ReviewedFacts | undefined = facts && {
      before: facts,
      review: {
        deck_id: read.card.deck_id,
        before: memoryOf(read.card),
        after: memoryOf(card),
        in_window: reviewedAt >= window.since,
      },
    };
    const after = reviewed && factsAfterUnmovingReview(at, reviewed);
    const gate = { version: read.version, fromDate: question.fromDate, factsVersion: versioned?.version };
    const outcome =
      reviewed && !after
        ? await movingReview(db, student, at, write, gate, reviewed)
        : await writeGradedReviewAlone(db, write, gate);
    if ('written' in outcome) {
      // Not after a move: the facts it recorded are not kept, and the next review reads them with the card.
      if (inLine && reviewLine.pending(student.user_id) > 1 && (after || !reviewed))
        leftInLine.set(student.user_id, {
          ...read,
          card,
          version: outcome.version,
          facts: undefined,
          factsVersion: undefined,
        });
      // This review studied its day: the next one of the day finds it studied.
      if (after && outcome.factsVersion !== null)
        factsLeft.keep(student.user_id, question, {
          facts: { ...after, day_studied: true },
          version: outcome.factsVersion,
        });
      return { review: outcome.written, card };
    }
  }
  return retriedTransaction(db, (trx) => recordLockedReview(trx, student, review, at));
}

/**
 * A review that moves readiness, decided on facts read without locks: its statement first in a transaction (the gate
 * takes the locks and checks the card and the facts), then the move, recorded from the same facts before the commit.
 */
async function movingReview(
  db: Db,
  student: Student,
  at: Date,
  write: GradedReviewWrite,
  gate: Parameters<typeof writeGradedReviewAlone>[2],
  reviewed: ReviewedFacts,
) {
  return retriedTransaction(db, async (trx) => {
    const outcome = await writeGradedReviewAlone(trx, write, gate);
    if ('written' in outcome) await progress(trx, student, at, { reviewed });
    return outcome;
  });
}

/** The card the review before in the student's line left, when it is this review's card; forgotten either way. */
function takeLeft(userId: string, cardId: string): CardToReview | undefined {
  const left = leftInLine.get(userId);
  leftInLine.delete(userId);
  return left?.card.id === cardId ? left : undefined;
}

/**
 * One review in the caller's transaction. Two statements, and more only when readiness moved: the locks with the
 * card, then the review's writes (the card, its log, the study day and xp, the card's event) with what readiness
 * compares (nothing, for a student without an upcoming exam or a pushed state: no review can move it). A review older
 * than the card's last reads the card's log between them. The card's read takes the student's lock, so the caller's
 * transaction need not take it first.
 */
async function recordLockedReview(
  trx: Db,
  student: Student,
  review: GradedCard,
  at: Date,
): Promise<RecordedReview | undefined> {
  const window = readinessWindow(at, student.time_zone);
  const locked = await lockCardForReview(trx, student.user_id, review.card_id, window.fromDate);
  if (!locked) return undefined;
  const { card } = locked;
  const { write, card: updated } = await gradedReview(
    trx,
    student,
    card,
    { at: card.last_reviewed_at },
    fsrsOf(locked.deck),
    { id: randomUUID(), grade: review.grade, reviewed_at: review.reviewedAt },
    at,
    { studyDay: () => true, tells: true },
  );
  const reviewedAt = write.outcome.reviewed_at;
  if (!locked.readinessFollows) {
    // Nothing readiness follows (no upcoming exam, no state pushed): no move to compare for. Should an exam have come
    // while the review waited for the student's lock, the write says so, and readiness is compared in full.
    const { review: logged, readinessFollows } = await writeGradedReviewFollowed(trx, write, window.fromDate);
    await progress(trx, student, at, { reviewed: readinessFollows ? undefined : null });
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
        in_window: reviewedAt >= window.since,
      },
    },
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
  const lasts = new Map<string, LastReview>(
    [...cards.values()].map((card) => [card.id, { at: card.last_reviewed_at }]),
  );
  const inOrder = reviews
    .map((review, index) => ({ ...review, index, time: (review.reviewedAt ?? at).getTime() }))
    .sort((a, b) => a.time - b.time || a.index - b.index);
  // The reviews' ids rise in the order they are applied, so that the log orders reviews of one instant as given.
  const ids = inOrder.map(() => randomUUID()).sort();
  for (const [position, review] of inOrder.entries()) {
    const current = cards.get(review.card_id)!;
    const { write, card, last } = await gradedReview(
      trx,
      student,
      current,
      lasts.get(review.card_id)!,
      fsrsOf(schedulers.get(current.deck_id)),
      { id: ids[position]!, grade: review.grade, reviewed_at: review.reviewedAt },
      at,
      // A batch records each of its days once, in time order; it tells of each card once, at its end.
      { studyDay: (day) => !studyDays.has(day), tells: false },
    );
    studyDays.add(write.day);
    reviewed[review.index] = { review: await writeGradedReview(trx, write), card };
    cards.set(review.card_id, card);
    lasts.set(review.card_id, last);
  }
  await progress(trx, student, at);
  // One card.updated per card the batch reviewed, as the batch left it.
  await emitEvents(
    trx,
    [...new Set(reviews.map((review) => review.card_id))].map((id) =>
      cardEvent('card.updated', student, cards.get(id)!, at),
    ),
  );
  return { reviewed };
}

/**
 * The scheduling of a review of a locked card and the write that records it (db/queries/graded-review.ts). A review
 * after the card's last one is its step on the card as it is; one before it (or at the same instant, in an order not
 * known) is placed by replaying the card's log with it (domain/srs.ts replayReviews), which reads the log first. A
 * review without a time happens as it is recorded: now, or just after the card's last review when that is later (a
 * concurrent review of the card, which took its lock first, or another process's clock), so it is never replayed.
 * `studyDay`: whether the review counts its local day (a batch counts each of its days once). `tells`: the write
 * carries the card's card.updated.
 */
async function gradedReview(
  trx: Db,
  student: Student,
  card: CardRow,
  last: LastReview,
  fsrs: FsrsParameters | undefined,
  given: { id: string; grade: Grade; reviewed_at: Date | undefined },
  at: Date,
  options: { studyDay: (day: string) => boolean; tells: boolean },
): Promise<{ write: GradedReviewWrite; card: CardRow; last: LastReview }> {
  const zone = student.time_zone;
  const reviewedAt = given.reviewed_at ?? (last.at && at <= last.at ? new Date(last.at.getTime() + 1) : at);
  const review = { ...given, reviewed_at: reviewedAt };
  let step: ReviewStep;
  let after: Pick<CardRow, keyof ReviewStep | 'last_reviewed_at'>;
  let lastAfter: LastReview;
  if (arrivesInOrder(last, review.reviewed_at, review.id)) {
    step = reviewStep(card, review.grade, review.reviewed_at, zone, fsrs);
    after = { ...step, last_reviewed_at: review.reviewed_at };
    lastAfter = { at: review.reviewed_at, id: review.id };
  } else {
    const log = [...(await cardReviewLog(trx, student.user_id, card.id)), review].sort(logOrder);
    ({ step, card: after } = replayReviews(card, log, zone, fsrs, review.id));
    const final = log.at(-1)!;
    lastAfter = { at: final.reviewed_at, id: final.id };
  }
  const { ease, repetitions, interval_days, next_due_at, last_reviewed_at, fsrs_state } = after;
  const updated: CardRow = {
    ...card,
    ease,
    repetitions,
    interval_days,
    next_due_at,
    last_reviewed_at,
    fsrs_state,
    updated_at: at,
  };
  const day = localDate(review.reviewed_at, zone);
  const write: GradedReviewWrite = {
    userId: student.user_id,
    cardId: card.id,
    reviewId: review.id,
    outcome: { grade: review.grade, reviewed_at: review.reviewed_at, ...step },
    card: updated,
    events: options.tells ? [outboxRow(cardEvent('card.updated', student, updated, at))] : [],
    at,
    ...studyInStatement({ day, claim: reviewClaim(card.id, review.grade, day) }, options.studyDay(day)),
  };
  return { write, card: updated, last: lastAfter };
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
