// A graded review's writes in one statement: the card's new schedule, the review's log, the study day, the review's
// xp and the card's event (the outbox row), as data-modifying CTEs. A review is the write of every study session and
// was six to nine round trips, each a socket write and read, the driver's protocol and a plan; now it is this one
// after the card's read. Every CTE that writes depends on the statement's gate, which says whether to write and reads
// what must be current under the student's lock: the day's capped xp and whether readiness follows the student.
//
// Run alone, in autocommit, after an unlocked read of the card (writeGradedReviewAlone: the student's lock is held for
// one statement, not for a transaction's round trips), the gate is graded_review_gate (migrations 20261207_0501,
// 0601 and 0701): it takes the student's lock and the card's and checks that the card is the version the review was
// computed from and, when readiness follows the student, that readiness's facts are still at the version of those the
// review was decided on (it moves no exam's readiness on them, or its transaction records the move next). A
// statement's own reads see the snapshot taken when it starts, before any lock it waits for; the function's reads
// come after its locks. Inside a transaction that took the locks with its read (lockCardForReview), the statement's
// snapshot already comes after them, and the gate is a plain sub-select of the same reads. With `facts`, the statement
// also returns what a readiness move compares (findReadinessComparison's parts) as they were just before the review:
// the caller applies the review to them (services/events) instead of reading them again.
import { sql } from 'kysely';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import type { Db } from '../connect.ts';
import { compiledOnce } from '../prepared-statements.ts';
import { studentDay } from '../../domain/student-day.ts';
import { studyDays, upcomingPreparation } from './exams.ts';
import { pushed, readinessFollows } from './readiness.ts';
import { lastActiveMoves } from './streak.ts';
import { COMPLETED } from './tasks.ts';
import { eventRows, insertEvents, type NewEvent } from './events.ts';
import type { ReviewOutcome } from './flashcards.ts';
import type { Grade, ReviewedCard } from '../../domain/srs.ts';

const REVIEW_COLUMNS = [
  'id',
  'card_id',
  'grade',
  'reviewed_at',
  'ease',
  'repetitions',
  'interval_days',
  'next_due_at',
  'applied',
] as const;

/** A review as logged. */
export type ReviewRow = Awaited<ReturnType<typeof writeGradedReview>>;

export interface GradedReviewWrite {
  userId: string;
  cardId: string;
  /** The review's id, chosen before its write: a replay orders reviews of one instant by it (domain/srs.ts). */
  reviewId: string;
  /** The review's own step, which its log row keeps. */
  outcome: ReviewOutcome;
  /** The card after the review: its step's result, or, for a review replayed into its place, the replay's. */
  card: ReviewedCard;
  /** The outbox rows that tell of the change (the card's card.updated), written by the same statement; or none. */
  events: readonly NewEvent[];
  at: Date;
  /** Whether this review counts its local day as a study day (a batch counts each of its days once). */
  studyDay: boolean;
  /** The student's local date of the review. */
  day: string;
  /** The review's xp claim (domain/xp.ts reviewClaim) and the daily cap of capped sources. */
  xp: { key: string; source: string; amount: number; cap: number; cappedSources: readonly string[] };
}

/** What the statement's gate checks after its locks (see the top of this file). */
interface GateValues {
  /** The card's row version as read (flashcards.ts readCardForReview). */
  version: string;
  /**
   * The version of readiness's facts the review was decided on (readiness.ts readinessFactsVersion), which the gate
   * reads again under the locks: the review is written only when it is the same. Null when the caller found readiness
   * not following the student: then it is written only when readiness does not follow her now (told from `fromDate`).
   */
  factsVersion: number | null;
  /** The first date of the exams readiness follows (the student's today). */
  fromDate: string;
}

/** Which facts a readiness move compares: the exams from `fromDate` (at most `limit`) and the study days of `zone` since `since`. */
export interface ReadinessFactsWindow {
  fromDate: string;
  limit: number;
  zone: string;
  since: Date;
}

/**
 * The gate's answer (migrations 20261207_0501, 0701): whether the writes ran, what it read after its locks, and the
 * version of readiness's facts the writes leave (null when they did not run).
 */
interface Gate {
  proceed: boolean;
  readiness_follows: boolean;
  capped_earned: number;
  facts_version: number | null;
}

/** The instants the review's local day begins and ends (the next day's start). */
interface DayBounds {
  dayStart: Date;
  dayEnd: Date;
}

interface Values {
  userId: string;
  cardId: string;
  reviewId: string;
  grade: number;
  reviewedAt: Date;
  ease: number;
  repetitions: number;
  intervalDays: number;
  nextDueAt: Date;
  cardEase: number;
  cardRepetitions: number;
  cardIntervalDays: number;
  cardNextDueAt: Date;
  cardLastReviewedAt: Date;
  cardFsrsState: string | null;
  /** The outbox rows as eventRows makes them: one JSON parameter, whatever their number. */
  events: string;
  at: Date;
  studyDay: boolean;
  day: string;
  xpKey: string;
  xpSource: string;
  xpAmount: number;
  xpCap: number;
  /** The capped sources, comma-separated: one text parameter on both engines. */
  cappedSources: string;
}

function values(write: GradedReviewWrite): Values {
  const { outcome, card } = write;
  return {
    userId: write.userId,
    cardId: write.cardId,
    reviewId: write.reviewId,
    grade: outcome.grade,
    reviewedAt: outcome.reviewed_at,
    ease: outcome.ease,
    repetitions: outcome.repetitions,
    intervalDays: outcome.interval_days,
    nextDueAt: outcome.next_due_at,
    cardEase: card.ease,
    cardRepetitions: card.repetitions,
    cardIntervalDays: card.interval_days,
    cardNextDueAt: card.next_due_at,
    cardLastReviewedAt: card.last_reviewed_at ?? outcome.reviewed_at,
    cardFsrsState: card.fsrs_state === null ? null : JSON.stringify(card.fsrs_state),
    events: eventRows(write.events),
    at: write.at,
    studyDay: write.studyDay,
    day: write.day,
    xpKey: write.xp.key,
    xpSource: write.xp.source,
    xpAmount: write.xp.amount,
    xpCap: write.xp.cap,
    cappedSources: write.xp.cappedSources.join(','),
  };
}

const VALUE_KEYS = [
  'userId',
  'cardId',
  'reviewId',
  'grade',
  'reviewedAt',
  'ease',
  'repetitions',
  'intervalDays',
  'nextDueAt',
  'cardEase',
  'cardRepetitions',
  'cardIntervalDays',
  'cardNextDueAt',
  'cardLastReviewedAt',
  'cardFsrsState',
  'events',
  'at',
  'studyDay',
  'day',
  'xpKey',
  'xpSource',
  'xpAmount',
  'xpCap',
  'cappedSources',
] as const satisfies ReadonlyArray<keyof Values>;

/** The values of the statement run alone: its gate's too. */
const GATED_KEYS = [...VALUE_KEYS, 'version', 'factsVersion', 'fromDate'] as const satisfies ReadonlyArray<
  keyof (Values & GateValues)
>;

/**
 * Where the statement's gate comes from. `locks`: the statement runs alone, and its gate is graded_review_gate, which
 * takes the locks and reads after them (see the top of this file). `held`: the caller's transaction took the locks
 * with its read (lockCardForReview), so the statement's snapshot comes after them and the gate is a plain sub-select
 * of the same reads (`follows`: with whether readiness follows; else false, unread); the transactions' reviews pay
 * nothing for the function.
 */
type GateKind = { locks: true } | { locks: false; follows: boolean };

/**
 * The gate and the writes as CTEs. Each write is guarded by the gate's `proceed`, a scalar sub-select that runs the
 * gate before the write's first row. The xp award is db/queries/xp.ts's awardXp in one step: the ledger's key refuses
 * a second award (a retry, the card's second review of the day), and the amount is domain/xp.ts cappedAmount over what
 * capped sources earned that day, read under the student's lock (by the gate). The student's row moves once: the
 * study day as recordStudyDay counts it (db/queries/streak.ts), and the xp awarded, and only when one of them moves it.
 */
function writes(db: Db, v: Values & Partial<GateValues>, kind: GateKind) {
  const proceeds = sql<boolean>`(select proceed from gate)`;
  const countsDay = sql<boolean>`(${v.studyDay}::boolean and (last_study_date is null or last_study_date <= ${v.day}::date))`;
  const moves = lastActiveMoves(v.reviewedAt);
  return db
    .with('gate', (qc) =>
      kind.locks
        ? qc
            .selectFrom(
              sql<Gate>`graded_review_gate(${v.userId}::uuid, ${v.cardId}::uuid, ${v.version}::text, ${v.day}::date,
                string_to_array(${v.cappedSources}::text, ','), ${v.fromDate}::date, ${v.factsVersion}::bigint)`.as(
                'g',
              ),
            )
            .select(['g.proceed', 'g.readiness_follows', 'g.capped_earned', 'g.facts_version'])
        : qc.selectNoFrom([
            sql<boolean>`true`.as('proceed'),
            sql<number | null>`null::bigint`.as('facts_version'),
            (kind.follows ? readinessFollows(db, v.userId, v.fromDate!) : sql<boolean>`false`).as('readiness_follows'),
            sql<number>`(${qc
              .selectFrom('xp_awards')
              .select(sql<number>`coalesce(sum(amount), 0)::int`.as('earned'))
              .where('user_id', '=', v.userId)
              .where('local_date', '=', sql<string>`${v.day}::date`)
              .where(sql<boolean>`source = any(string_to_array(${v.cappedSources}::text, ','))`)})`.as('capped_earned'),
          ]),
    )
    .with('card', (qc) =>
      qc
        .updateTable('flashcard_cards')
        .set({
          ease: v.cardEase,
          repetitions: v.cardRepetitions,
          interval_days: v.cardIntervalDays,
          next_due_at: v.cardNextDueAt,
          last_reviewed_at: v.cardLastReviewedAt,
          fsrs_state: sql`${v.cardFsrsState}::jsonb`,
          updated_at: v.at,
        })
        .where('id', '=', v.cardId)
        .where('user_id', '=', v.userId)
        .where(proceeds)
        .returning(['id', sql<string>`xmin::text`.as('version')]),
    )
    .with('outbox', (qc) => insertEvents(qc, v.events, proceeds))
    .with('award', (qc) =>
      qc
        .insertInto('xp_awards')
        .columns(['user_id', 'award_key', 'source', 'amount', 'local_date', 'awarded_at'])
        .expression(
          qc
            .selectNoFrom([
              sql<string>`${v.userId}::uuid`.as('user_id'),
              sql<string>`${v.xpKey}::text`.as('award_key'),
              sql<string>`${v.xpSource}::text`.as('source'),
              sql<number>`greatest(0, least(${v.xpAmount}::int, ${v.xpCap}::int - (select capped_earned from gate)))`.as(
                'amount',
              ),
              sql<string>`${v.day}::date`.as('local_date'),
              sql<Date>`${v.at}::timestamptz`.as('awarded_at'),
            ])
            .where(proceeds),
        )
        .onConflict((oc) => oc.columns(['user_id', 'award_key']).doNothing())
        .returning('amount'),
    )
    .with('student', (qc) =>
      qc
        .updateTable('users')
        .set({
          streak: sql<number>`case when ${countsDay} then (case when last_study_date = ${v.day}::date then streak when last_study_date = ${v.day}::date - 1 then streak + 1 else 1 end) else streak end`,
          last_study_date: sql<string>`case when ${countsDay} then ${v.day}::date else last_study_date end`,
          last_active_at: sql<Date>`case when ${countsDay} and ${moves} then ${v.reviewedAt}::timestamptz else last_active_at end`,
          xp: sql<number>`xp + coalesce((select amount from award), 0)`,
        })
        .where('id', '=', v.userId)
        .where(proceeds)
        // The row moves for a new study day, a last activity a step further on, or xp: a card reviewed again within
        // the step, or past the daily cap, leaves it as it was (no row version, no trigger).
        .where((eb) =>
          eb.or([
            sql<boolean>`${countsDay} and (last_study_date is distinct from ${v.day}::date or ${moves})`,
            eb.exists(eb.selectFrom('award').select('amount').where('amount', '>', 0)),
          ]),
        )
        .returning('id'),
    )
    .with('review', (qc) =>
      qc
        .insertInto('flashcard_reviews')
        .columns([
          'id',
          'card_id',
          'user_id',
          'grade',
          'reviewed_at',
          'ease',
          'repetitions',
          'interval_days',
          'next_due_at',
        ])
        .expression(
          qc
            .selectNoFrom([
              sql<string>`${v.reviewId}::uuid`.as('id'),
              sql<string>`${v.cardId}::uuid`.as('card_id'),
              sql<string>`${v.userId}::uuid`.as('user_id'),
              sql<number>`${v.grade}::int`.as('grade'),
              sql<Date>`${v.reviewedAt}::timestamptz`.as('reviewed_at'),
              sql<number>`${v.ease}::float8`.as('ease'),
              sql<number>`${v.repetitions}::int`.as('repetitions'),
              sql<number>`${v.intervalDays}::int`.as('interval_days'),
              sql<Date>`${v.nextDueAt}::timestamptz`.as('next_due_at'),
            ])
            .where(proceeds),
        )
        .returning(REVIEW_COLUMNS),
    );
}

const graded = compiledOnce(VALUE_KEYS, (db: Db, v: Values) =>
  writes(db, v, { locks: false, follows: false })
    .selectFrom('review')
    .select(REVIEW_COLUMNS)
    .$narrowType<{ card_id: string }>(),
);

const gradedWithFacts = compiledOnce(
  [...VALUE_KEYS, 'fromDate', 'limit', 'zone', 'since', 'dayStart', 'dayEnd'],
  (db: Db, v: Values & ReadinessFactsWindow & DayBounds) => {
    return writes(db, v, { locks: false, follows: false })
      .selectFrom('review')
      .select(REVIEW_COLUMNS)
      .$narrowType<{ card_id: string }>()
      .select((eb) => [
        upcomingPreparation(db, v.userId, v.fromDate, v.limit).as('exams'),
        studyDays(db, v.userId, { zone: v.zone, since: v.since }).as('study_days'),
        // The review's local day as the instants it spans (a filter on the local date read every review of the days
        // around it), and as the first review or completion from its start, before its end: a min is one probe of the
        // index whatever the statistics say, where an EXISTS may be planned as a scan of the table when one student
        // owns most of it.
        eb
          .or([
            eb(
              db
                .selectFrom('flashcard_reviews')
                .select((q) => q.fn.min('reviewed_at').as('at'))
                .where('user_id', '=', v.userId)
                .where('reviewed_at', '>=', v.dayStart),
              '<',
              v.dayEnd,
            ),
            eb(
              db
                .selectFrom('tasks')
                .select((q) => q.fn.min('completed_at').as('at'))
                .where('user_id', '=', v.userId)
                .where('status', '=', COMPLETED)
                .where('completed_at', '>=', v.dayStart),
              '<',
              v.dayEnd,
            ),
          ])
          .as('day_studied'),
        jsonArrayFrom(pushed(db, v.userId)).as('pushed'),
      ]);
  },
);

/** The statement with its gate's answer: the review's log row when the writes ran, nulls when they did not. */
const answered = (db: Db, v: Values & Partial<GateValues>, kind: GateKind) =>
  writes(db, v, kind)
    .selectFrom('gate')
    .leftJoin('review', (join) => join.onTrue())
    .leftJoin('card', (join) => join.onTrue())
    .select(REVIEW_COLUMNS.map((column) => `review.${column}` as const))
    .select(['gate.proceed', 'gate.readiness_follows', 'gate.facts_version', 'card.version']);

const gatedReview = compiledOnce(GATED_KEYS, (db: Db, v: Values & GateValues) => answered(db, v, { locks: true }));

const followedReview = compiledOnce([...VALUE_KEYS, 'fromDate'], (db: Db, v: Values & { fromDate: string }) =>
  answered(db, v, { locks: false, follows: true }),
);

/** A review's log row, as the statement returns it. */
type LoggedReview = Awaited<ReturnType<typeof graded>>[number];

/**
 * Writes a graded review of a student whom readiness did not follow when the card was read under the locks
 * (lockCardForReview), in the caller's transaction, and tells whether it follows now: the gate reads it after the
 * student's lock, so an exam added while the review waited for it shows.
 */
export async function writeGradedReviewFollowed(trx: Db, write: GradedReviewWrite, fromDate: string) {
  const [row] = await followedReview(trx, { ...values(write), fromDate });
  const { proceed, readiness_follows, version: _version, facts_version: _factsVersion, ...review } = row!;
  if (!proceed) throw new Error(`the review of card ${write.cardId} found it gone under its locks`);
  return { review: review as LoggedReview, readinessFollows: readiness_follows };
}

/**
 * The review as one statement, of a card read without locks as `version`, in autocommit (or first in a transaction
 * that then records the readiness move the review makes): `written` with its log row, the card's new version (the
 * review's own write, which the next review of the card may start from) and the version of readiness's facts it left
 * (null for a student with no exam and no state pushed, whose version it leaves as it was), or why nothing was
 * written: `moved` (another write changed the card since it was read, or removed it), `follows` (readiness follows
 * the student, and `factsVersion` is not what the gate reads under the locks: none was given, or another write moved
 * the facts). `fromDate`: the student's today, from which readiness follows her exams.
 */
export async function writeGradedReviewAlone(
  db: Db,
  write: GradedReviewWrite,
  card: { version: string; fromDate: string; factsVersion: number | undefined },
): Promise<
  { written: LoggedReview; version: string; factsVersion: number | null } | { moved: true } | { follows: true }
> {
  const [row] = await gatedReview(db, {
    ...values(write),
    version: card.version,
    fromDate: card.fromDate,
    factsVersion: card.factsVersion ?? null,
  });
  const { proceed, readiness_follows, version, facts_version, ...review } = row!;
  if (proceed) return { written: review as LoggedReview, version: version!, factsVersion: facts_version };
  return readiness_follows ? { follows: true } : { moved: true };
}

/** Writes a graded review in the caller's transaction, which holds the card's lock (see above); returns its log row. */
export async function writeGradedReview(trx: Db, write: GradedReviewWrite) {
  const [row] = await graded(trx, values(write));
  return row!;
}

/**
 * Writes a graded review, in the caller's transaction that holds the card's lock, and returns its log row with what
 * readiness compares as it was before the review (its statement's snapshot): the exams, the window's study days,
 * whether the review's local day had study already, and what was last pushed.
 */
export async function writeGradedReviewWithFacts(trx: Db, write: GradedReviewWrite, window: ReadinessFactsWindow) {
  const day = studentDay(write.outcome.reviewed_at, window.zone);
  const [row] = await gradedWithFacts(trx, { ...values(write), ...window, dayStart: day.start, dayEnd: day.end });
  const { exams, study_days, day_studied, pushed: last, ...review } = row!;
  return { review, facts: { exams, study_days, day_studied: Boolean(day_studied), pushed: last } };
}

/** The student's reviews of the card, as a replay reads them (domain/srs.ts replayReviews): in the log's order. */
export async function cardReviewLog(trx: Db, userId: string, cardId: string) {
  return cardLog(trx, { userId, cardId });
}

const cardLog = compiledOnce(['userId', 'cardId'], (db: Db, v: { userId: string; cardId: string }) =>
  db
    .selectFrom('flashcard_reviews')
    .select(['id', sql<Grade>`grade`.as('grade'), 'reviewed_at'])
    .where('card_id', '=', v.cardId)
    .where('user_id', '=', v.userId)
    .orderBy('reviewed_at')
    .orderBy('id'),
);
