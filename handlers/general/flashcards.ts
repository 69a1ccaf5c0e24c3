// Flashcard decks, their cards, and graded reviews that move each card along SM-2 (srs.ts).
import {
  applyReviewToCard,
  deleteCard as deleteCardRow,
  deleteDeck as deleteDeckRow,
  findCard,
  findDeck,
  insertCard,
  insertDeck,
  insertReview,
  listCards as listCardRows,
  listDecks as listDeckRows,
  lockCard,
  lockDeck,
  updateCardText,
  updateDeck as updateDeckRow,
  type CardRow,
  type DeckRow,
  type ReviewRow,
} from '../../db/queries/flashcards.ts';
import type { Db } from '../../db/connect.ts';
import { recordStudyDay } from '../../db/queries/streak.ts';
import { readinessMoved } from '../../server/events/readiness.ts';
import { problems } from '../../server/problems.ts';
import { page, timeIdCursor } from '../../server/http/cursor.ts';
import { idempotently } from '../../server/http/idempotency.ts';
import { nextDueAt, sm2Step, type Grade } from '../../domain/srs.ts';
import { localDate } from '../../domain/student-day.ts';
import type { GeneralHandlers, Schemas } from './types.ts';

const noDeck = () => problems.notFound('You have no deck with this id.');
const noCard = () => problems.notFound('You have no card with this id.');

export const listDecks: GeneralHandlers['listDecks'] = async ({ query, principal }, { db, now }) => {
  const rows = await listDeckRows(db, principal.user_id, now(), { limit: query.limit, after: timeIdCursor(query.cursor) });
  const result = page(rows, query.limit, (row) => [row.created_at.toISOString(), row.id]);
  return { status: 200, body: { ...result, data: result.data.map(deckBody) } };
};

export const createDeck: GeneralHandlers['createDeck'] = async ({ headers, body, principal }, { db, now }) => {
  const at = now();
  return idempotently(db, { userId: principal.user_id, key: headers['Idempotency-Key'], operationId: 'createDeck', body, now: at }, async (trx) => {
    const id = await insertDeck(trx, { user_id: principal.user_id, ...body }, at);
    return { status: 201 as const, body: deckBody(await deckOrThrow(trx, principal.user_id, id, at)) };
  });
};

export const getDeck: GeneralHandlers['getDeck'] = async ({ path, principal }, { db, now }) => {
  return { status: 200, body: deckBody(await deckOrThrow(db, principal.user_id, path.deck_id, now())) };
};

export const updateDeck: GeneralHandlers['updateDeck'] = async ({ path, body, principal }, { db, now }) => {
  const at = now();
  if (!(await updateDeckRow(db, principal.user_id, path.deck_id, body, at))) throw noDeck();
  return { status: 200, body: deckBody(await deckOrThrow(db, principal.user_id, path.deck_id, at)) };
};

export const deleteDeck: GeneralHandlers['deleteDeck'] = async ({ path, principal }, { db, now }) => {
  await db.transaction().execute(async (trx) => {
    if (!(await deleteDeckRow(trx, principal.user_id, path.deck_id))) throw noDeck();
    await readinessMoved(trx, principal, now());
  });
  return { status: 204, body: undefined };
};

export const listCards: GeneralHandlers['listCards'] = async ({ path, query, principal }, { db, now }) => {
  const at = now();
  // An empty page must still tell an empty deck from someone else's.
  await deckOrThrow(db, principal.user_id, path.deck_id, at);
  const rows = await listCardRows(db, principal.user_id, path.deck_id, {
    limit: query.limit,
    dueAt: query.due ? at : undefined,
    after: timeIdCursor(query.cursor),
  });
  const result = page(rows, query.limit, (row) => [row.created_at.toISOString(), row.id]);
  return { status: 200, body: { ...result, data: result.data.map(cardBody) } };
};

export const createCard: GeneralHandlers['createCard'] = async ({ path, headers, body, principal }, { db, now }) => {
  const at = now();
  const request = { userId: principal.user_id, key: headers['Idempotency-Key'], operationId: 'createCard', body: { deck_id: path.deck_id, ...body }, now: at };
  return idempotently(db, request, async (trx) => {
    // Locked, so the deck cannot be deleted between this check and the insert.
    if (!(await lockDeck(trx, principal.user_id, path.deck_id))) throw noDeck();
    const row = await insertCard(trx, { user_id: principal.user_id, deck_id: path.deck_id, front: body.front, back: body.back }, at);
    await readinessMoved(trx, principal, at);
    return { status: 201 as const, body: cardBody(row) };
  });
};

export const getCard: GeneralHandlers['getCard'] = async ({ path, principal }, { db }) => {
  const row = await findCard(db, principal.user_id, path.card_id);
  if (!row) throw noCard();
  return { status: 200, body: cardBody(row) };
};

export const updateCard: GeneralHandlers['updateCard'] = async ({ path, body, principal }, { db, now }) => {
  const row = await updateCardText(db, principal.user_id, path.card_id, body, now());
  if (!row) throw noCard();
  return { status: 200, body: cardBody(row) };
};

export const deleteCard: GeneralHandlers['deleteCard'] = async ({ path, principal }, { db, now }) => {
  await db.transaction().execute(async (trx) => {
    if (!(await deleteCardRow(trx, principal.user_id, path.card_id))) throw noCard();
    await readinessMoved(trx, principal, now());
  });
  return { status: 204, body: undefined };
};

/**
 * One transaction: lock the card, compute the SM-2 step, update the card and record the review, so a crash leaves
 * both or neither and concurrent reviews of one card apply one after the other. A retry with the same
 * Idempotency-Key gets the stored first response and records nothing.
 */
export const reviewCard: GeneralHandlers['reviewCard'] = async ({ path, headers, body, principal }, { db, now }) => {
  const reviewedAt = now();
  const request = { userId: principal.user_id, key: headers['Idempotency-Key'], operationId: 'reviewCard', body: { card_id: path.card_id, ...body }, now: reviewedAt };
  return idempotently(db, request, async (trx) => {
    const card = await lockCard(trx, principal.user_id, path.card_id);
    if (!card) throw noCard();
    const step = sm2Step(card, body.grade as Grade);
    const outcome = { grade: body.grade, reviewed_at: reviewedAt, ...step, next_due_at: nextDueAt(reviewedAt, step.interval_days, principal.time_zone) };
    const updated = await applyReviewToCard(trx, principal.user_id, path.card_id, outcome);
    const review = await insertReview(trx, { ...outcome, card_id: path.card_id, user_id: principal.user_id });
    await recordStudyDay(trx, principal.user_id, localDate(reviewedAt, principal.time_zone), reviewedAt);
    await readinessMoved(trx, principal, reviewedAt);
    return { status: 201 as const, body: { review: reviewBody(review), card: cardBody(updated) } };
  });
};

async function deckOrThrow(db: Db, userId: string, deckId: string, at: Date): Promise<DeckRow> {
  const row = await findDeck(db, userId, deckId, at);
  if (!row) throw noDeck();
  return row;
}

function deckBody(row: DeckRow): Schemas['Deck'] {
  return { ...row, next_due_at: row.next_due_at?.toISOString() ?? null, created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString() };
}

function cardBody(row: CardRow): Schemas['Card'] {
  return {
    ...row,
    next_due_at: row.next_due_at.toISOString(),
    last_reviewed_at: row.last_reviewed_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

function reviewBody(row: ReviewRow): Schemas['Review'] {
  return { ...row, reviewed_at: row.reviewed_at.toISOString(), next_due_at: row.next_due_at.toISOString() };
}
