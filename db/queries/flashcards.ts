// Flashcard decks, cards and reviews of one student. Every query is scoped to the owner: another student's deck or
// card id finds nothing, exactly like an unknown one.
import { randomUUID } from 'node:crypto';
import { sql, type ExpressionBuilder } from 'kysely';
import type { Db } from '../connect.ts';
import { compiledOnce } from '../prepared-statements.ts';
import { studentLocked } from '../student-transaction.ts';
import {
  readinessFacts,
  readinessFactsVersion,
  readinessFollows,
  type FactsBeforeReview,
  type FactsQuestion,
} from './readiness.ts';
import type { Database } from '../schema.ts';
import type { FsrsCardState, FsrsParameters } from '../../domain/fsrs.ts';

export const CARD_COLUMNS = [
  'id',
  'deck_id',
  'front',
  'back',
  'ease',
  'repetitions',
  'interval_days',
  'next_due_at',
  'last_reviewed_at',
  'fsrs_state',
  'created_at',
  'updated_at',
] as const;

export type DeckRow = NonNullable<Awaited<ReturnType<typeof findDeck>>>;
export type CardRow = NonNullable<Awaited<ReturnType<typeof findCard>>>;
/** The sort key of a page: decks newest first, cards oldest first, each broken by id. */
export interface AfterKey {
  /** created_at of the last item. */
  at: Date;
  id: string;
}

/** Decks with the spaced-repetition summary of their cards at `now`. */
export function decksWithSummary(db: Db, userId: string, now: Date) {
  return db
    .selectFrom('flashcard_decks as d')
    .leftJoinLateral(
      (eb) =>
        eb
          .selectFrom('flashcard_cards as c')
          .whereRef('c.deck_id', '=', 'd.id')
          .select((cards) => [
            cards.fn.countAll<number>().as('card_count'),
            sql<number>`count(*) filter (where c.next_due_at <= ${now})`.as('due_count'),
            sql<number>`count(*) filter (where c.last_reviewed_at is null)`.as('new_count'),
            cards.fn.min('c.next_due_at').as('next_due_at'),
          ])
          .as('s'),
      (join) => join.onTrue(),
    )
    .select([
      'd.id',
      'd.title',
      'd.description',
      'd.course',
      'd.scheduler',
      'd.fsrs_parameters',
      'd.created_at',
      'd.updated_at',
      's.card_count',
      's.due_count',
      's.new_count',
      's.next_due_at',
    ])
    .$narrowType<{ card_count: number; due_count: number; new_count: number }>()
    .where('d.user_id', '=', userId);
}

export async function listDecks(db: Db, userId: string, now: Date, options: { limit: number; after?: AfterKey }) {
  let query = decksWithSummary(db, userId, now);
  if (options.after) {
    const { at, id } = options.after;
    query = query.where((eb) => eb(eb.refTuple('d.created_at', 'd.id'), '<', eb.tuple(at, id)));
  }
  return query
    .orderBy('d.created_at', 'desc')
    .orderBy('d.id', 'desc')
    .limit(options.limit + 1)
    .execute();
}

export async function findDeck(db: Db, userId: string, deckId: string, now: Date) {
  return decksWithSummary(db, userId, now).where('d.id', '=', deckId).executeTakeFirst();
}

export interface NewDeckRow {
  /** A fixed id (the demo data's); a random one when absent. */
  id?: string;
  user_id: string;
  title: string;
  description?: string;
  course?: string | null;
  scheduler?: 'sm2' | 'fsrs';
  /** domain/fsrs.ts FsrsParameters, stored as given. */
  fsrs_parameters?: FsrsParameters | null;
}

/** `now` stamps created_at and updated_at, at the millisecond precision cursors carry. */
export async function insertDeck(db: Db, deck: NewDeckRow, now: Date): Promise<string> {
  const { fsrs_parameters, ...fields } = deck;
  const row = await db
    .insertInto('flashcard_decks')
    .values({ ...fields, fsrs_parameters: jsonOrNull(fsrs_parameters), created_at: now, updated_at: now })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export type DeckChanges = Partial<{
  title: string;
  description: string;
  course: string | null;
  scheduler: 'sm2' | 'fsrs';
  fsrs_parameters: FsrsParameters;
}>;

/** Each deck's scheduler and FSRS parameters, by deck id (the decks whose cards a review is about to move). */
export async function deckSchedulers(db: Db, userId: string, deckIds: string[]) {
  const rows = await db
    .selectFrom('flashcard_decks')
    .select(['id', 'scheduler', 'fsrs_parameters'])
    .where('user_id', '=', userId)
    .where('id', 'in', deckIds)
    .execute();
  return new Map(rows.map((row) => [row.id, row]));
}

function jsonOrNull(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}

/** False when the student has no deck with this id. */
export async function updateDeck(
  db: Db,
  userId: string,
  deckId: string,
  changes: DeckChanges,
  now: Date,
): Promise<boolean> {
  const { fsrs_parameters, ...fields } = changes;
  const result = await db
    .updateTable('flashcard_decks')
    .set({
      ...fields,
      ...(fsrs_parameters ? { fsrs_parameters: JSON.stringify(fsrs_parameters) } : {}),
      updated_at: now,
    })
    .where('id', '=', deckId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Deletes the deck; its cards and exam links go with it (foreign keys). False when there is no such deck. */
export async function deleteDeck(db: Db, userId: string, deckId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('flashcard_decks')
    .where('id', '=', deckId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export async function listCards(
  db: Db,
  userId: string,
  deckId: string,
  options: { limit: number; dueAt?: Date; after?: AfterKey },
) {
  let query = db
    .selectFrom('flashcard_cards')
    .select(CARD_COLUMNS)
    .where('user_id', '=', userId)
    .where('deck_id', '=', deckId);
  if (options.dueAt) query = query.where('next_due_at', '<=', options.dueAt);
  if (options.after) {
    const { at, id } = options.after;
    query = query.where((eb) => eb(eb.refTuple('created_at', 'id'), '>', eb.tuple(at, id)));
  }
  return query
    .orderBy('created_at')
    .orderBy('id')
    .limit(options.limit + 1)
    .execute();
}

/** Locks the student's deck row until the transaction ends; false when there is no such deck. */
export async function lockDeck(trx: Db, userId: string, deckId: string): Promise<boolean> {
  const row = await trx
    .selectFrom('flashcard_decks')
    .select('id')
    .where('id', '=', deckId)
    .where('user_id', '=', userId)
    .forUpdate()
    .executeTakeFirst();
  return row !== undefined;
}

export interface NewCardRow {
  id?: string;
  user_id: string;
  deck_id: string;
  front: string;
  back: string;
}

/** A new card is due at once: next_due_at is its creation time. */
export async function insertCard(db: Db, card: NewCardRow, now: Date) {
  return db
    .insertInto('flashcard_cards')
    .values({ ...card, next_due_at: now, created_at: now, updated_at: now })
    .returning(CARD_COLUMNS)
    .executeTakeFirstOrThrow();
}

/**
 * Several new cards in one statement, returned in the order given. They share created_at, so their list order (by
 * created_at, id) is by id: ids are drawn here in ascending order to keep the request's order in the deck.
 */
export async function insertCards(db: Db, cards: NewCardRow[], now: Date) {
  const ids = cards.map(() => randomUUID()).sort();
  const rows = await db
    .insertInto('flashcard_cards')
    .values(cards.map((card, i) => ({ ...card, id: ids[i], next_due_at: now, created_at: now, updated_at: now })))
    .returning(CARD_COLUMNS)
    .execute();
  const byId = new Map(rows.map((row) => [row.id, row]));
  return ids.map((id) => byId.get(id)!);
}

/** The student's cards among `cardIds`, each locked until the transaction ends (in id order, so batches never deadlock). */
export async function lockCards(trx: Db, userId: string, cardIds: string[]) {
  if (cardIds.length === 0) return [];
  return trx
    .selectFrom('flashcard_cards')
    .select(CARD_COLUMNS)
    .where('user_id', '=', userId)
    .where('id', 'in', cardIds)
    .orderBy('id')
    .forUpdate()
    .execute();
}

function ownCard(eb: ExpressionBuilder<Database, 'flashcard_cards'>, userId: string, cardId: string) {
  return eb.and([eb('id', '=', cardId), eb('user_id', '=', userId)]);
}

export async function findCard(db: Db, userId: string, cardId: string) {
  return db
    .selectFrom('flashcard_cards')
    .select(CARD_COLUMNS)
    .where((eb) => ownCard(eb, userId, cardId))
    .executeTakeFirst();
}

/**
 * The card with its deck's scheduler, and the locks a review takes: the student's first (db/student-transaction.ts),
 * then the card's, so concurrent reviews of one card apply one after the other. One statement: a review is the write
 * of every study session. When the student's lock had to wait, the card's lock reads the card as the writer before
 * left it (PostgreSQL rechecks a row it locks after a wait at its newest version); the review's later statements start
 * after the locks, so they see that writer's changes in full. Nothing is locked when there is no such card.
 */
export async function lockCardForReview(trx: Db, userId: string, cardId: string, fromDate: string) {
  const [row] = await cardForReview(trx, { userId, cardId, fromDate });
  if (!row) return undefined;
  studentLocked(trx, userId);
  const { scheduler, fsrs_parameters, readiness_follows, ...card } = row;
  // Whether readiness followed the student (db/queries/graded-review.ts readinessFollows) as this statement's snapshot
  // saw it, which may be from before the student's lock: a hint, which the review's write checks again.
  return { card, deck: { scheduler, fsrs_parameters }, readinessFollows: Boolean(readiness_follows) };
}

const cardForReview = compiledOnce(
  ['userId', 'cardId', 'fromDate'],
  (db: Db, v: { userId: string; cardId: string; fromDate: string }) =>
    db
      .selectFrom('users as u')
      .innerJoin('flashcard_cards as c', 'c.user_id', 'u.id')
      .innerJoin('flashcard_decks as d', (join) =>
        join.onRef('d.id', '=', 'c.deck_id').onRef('d.user_id', '=', 'c.user_id'),
      )
      .select(CARD_COLUMNS.map((column) => `c.${column}` as const))
      .select(['d.scheduler', 'd.fsrs_parameters'])
      .select(readinessFollows(db, v.userId, v.fromDate).as('readiness_follows'))
      .where('u.id', '=', v.userId)
      .where('c.id', '=', v.cardId)
      .forNoKeyUpdate('u')
      .forUpdate('c'),
);

/**
 * The card with its deck's scheduler, read without locks, and its row version (xmin: any write of the row makes a new
 * one), which a review written alone (db/queries/graded-review.ts writeGradedReviewAlone) checks under its locks; and,
 * when readiness follows the student (db/queries/readiness.ts readinessFollows), readiness's facts as `question` asks
 * them (readiness_facts) with their version, read in the same snapshot: the review decides on them, and its gate
 * checks under the locks that the version is still the same. Not `withFacts`: the caller has them already. Undefined
 * when the student has no such card.
 */
export async function readCardForReview(
  db: Db,
  userId: string,
  cardId: string,
  question: FactsQuestion,
  withFacts = true,
) {
  const [row] = await cardToReview(db, { userId, cardId, withFacts, ...question });
  if (!row) return undefined;
  const { scheduler, fsrs_parameters, version, facts, facts_version, ...card } = row;
  const read = facts === null ? {} : { facts, factsVersion: facts_version! };
  return { card, deck: { scheduler, fsrs_parameters }, version, ...read };
}

const cardToReview = compiledOnce(
  ['userId', 'cardId', 'withFacts', 'fromDate', 'limit', 'zone', 'since', 'dayStart', 'dayEnd'],
  (db: Db, v: { userId: string; cardId: string; withFacts: boolean } & FactsQuestion) =>
    db
      .selectFrom('flashcard_cards as c')
      .innerJoin('flashcard_decks as d', (join) =>
        join.onRef('d.id', '=', 'c.deck_id').onRef('d.user_id', '=', 'c.user_id'),
      )
      .select(CARD_COLUMNS.map((column) => `c.${column}` as const))
      .select(['d.scheduler', 'd.fsrs_parameters', sql<string>`c.xmin::text`.as('version')])
      .select(
        sql<FactsBeforeReview | null>`case when ${v.withFacts}::boolean and ${readinessFollows(db, v.userId, v.fromDate)} then ${readinessFacts(v)} end`.as(
          'facts',
        ),
      )
      .select(
        sql<number | null>`case when ${v.withFacts}::boolean then ${readinessFactsVersion(db, v.userId)} end`.as(
          'facts_version',
        ),
      )
      .where('c.user_id', '=', v.userId)
      .where('c.id', '=', v.cardId),
);

export async function updateCardText(
  db: Db,
  userId: string,
  cardId: string,
  changes: Partial<{ front: string; back: string }>,
  now: Date,
) {
  return db
    .updateTable('flashcard_cards')
    .set({ ...changes, updated_at: now })
    .where((eb) => ownCard(eb, userId, cardId))
    .returning(CARD_COLUMNS)
    .executeTakeFirst();
}

export async function deleteCard(db: Db, userId: string, cardId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('flashcard_cards')
    .where((eb) => ownCard(eb, userId, cardId))
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export interface ReviewOutcome {
  grade: number;
  reviewed_at: Date;
  ease: number;
  repetitions: number;
  interval_days: number;
  next_due_at: Date;
  /** The card's FSRS memory after the review (unchanged under SM-2). */
  fsrs_state: FsrsCardState | null;
}
