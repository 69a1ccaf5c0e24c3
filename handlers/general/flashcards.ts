// Flashcard decks, their cards, and graded reviews that move each card along its deck's scheduler (SM-2 or FSRS;
// services/flashcards/reviews.ts).
import {
  findCard,
  findDeck,
  listCards as listCardRows,
  listDecks as listDeckRows,
  type DeckRow,
} from '../../db/queries/flashcards.ts';
import type { Db } from '../../db/connect.ts';
import {
  addCard,
  addCards,
  changeCardText,
  changeDeck,
  removeCard,
  removeDeck,
} from '../../services/flashcards/writes.ts';
import { addDeck } from '../../services/flashcards/new-deck.ts';
import { cardBody, deckBody, reviewResultBody, reviewTime } from '../../services/flashcards/card-body.ts';
import { recordReview, recordReviews } from '../../services/flashcards/reviews.ts';
import { problems } from '../../server/http/problems.ts';
import { page, timeIdCursor } from '../../server/contract/cursor.ts';
import { idempotently } from '../../server/http/idempotency.ts';
import type { Grade } from '../../domain/srs.ts';
import { fsrsParameters } from '../../domain/fsrs.ts';
import type { GeneralHandlers } from './types.ts';

const noDeck = () => problems.notFound('You have no deck with this id.');
const noCard = () => problems.notFound('You have no card with this id.');

export const listDecks: GeneralHandlers['listDecks'] = async ({ query, principal }, { db, now }) => {
  const rows = await listDeckRows(db, principal.user_id, now(), {
    limit: query.limit,
    after: timeIdCursor(query.cursor),
  });
  const result = page(rows, query.limit, (row) => [row.created_at.toISOString(), row.id]);
  return { status: 200, body: { ...result, data: result.data.map(deckBody) } };
};

export const createDeck: GeneralHandlers['createDeck'] = async ({ headers, body, principal }, { db, now }) => {
  const at = now();
  return idempotently(
    db,
    { userId: principal.user_id, key: headers['Idempotency-Key'], operationId: 'createDeck', body, now: at },
    async (trx) => ({ status: 201 as const, body: await addDeck(trx, principal, body, at) }),
  );
};

export const getDeck: GeneralHandlers['getDeck'] = async ({ path, principal }, { db, now }) => {
  return { status: 200, body: deckBody(await deckOrThrow(db, principal.user_id, path.deck_id, now())) };
};

export const updateDeck: GeneralHandlers['updateDeck'] = async ({ path, body, principal }, { db, now }) => {
  const at = now();
  const { fsrs_parameters, ...fields } = body;
  const current = await deckOrThrow(db, principal.user_id, path.deck_id, at);
  // Switching to FSRS without parameters stores the defaults, so the deck always shows the ones its reviews use.
  const stored = fsrs_parameters
    ? fsrsParameters(fsrs_parameters)
    : body.scheduler === 'fsrs' && !current.fsrs_parameters
      ? fsrsParameters(null)
      : undefined;
  const changes = { ...fields, ...(stored ? { fsrs_parameters: stored } : {}) };
  const row = await changeDeck(db, principal, path.deck_id, changes, at);
  if (!row) throw noDeck();
  return { status: 200, body: deckBody(row) };
};

export const deleteDeck: GeneralHandlers['deleteDeck'] = async ({ path, principal }, { db, now }) => {
  if (!(await removeDeck(db, principal, path.deck_id, now()))) throw noDeck();
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
  const request = {
    userId: principal.user_id,
    key: headers['Idempotency-Key'],
    operationId: 'createCard',
    body: { deck_id: path.deck_id, ...body },
    now: at,
  };
  return idempotently(db, request, async (trx) => {
    const row = await addCard(trx, principal, path.deck_id, body, at);
    if (!row) throw noDeck();
    return { status: 201 as const, body: cardBody(row) };
  });
};

/** Up to 500 cards in one statement: the spec refuses a batch with any bad card (naming its index), so none is added. */
export const createCards: GeneralHandlers['createCards'] = async ({ path, headers, body, principal }, { db, now }) => {
  const at = now();
  const request = {
    userId: principal.user_id,
    key: headers['Idempotency-Key'],
    operationId: 'createCards',
    body: { deck_id: path.deck_id, ...body },
    now: at,
  };
  return idempotently(db, request, async (trx) => {
    const rows = await addCards(trx, principal, path.deck_id, body.cards, at);
    if (!rows) throw noDeck();
    return { status: 201 as const, body: { data: rows.map(cardBody) } };
  });
};

export const getCard: GeneralHandlers['getCard'] = async ({ path, principal }, { db }) => {
  const row = await findCard(db, principal.user_id, path.card_id);
  if (!row) throw noCard();
  return { status: 200, body: cardBody(row) };
};

export const updateCard: GeneralHandlers['updateCard'] = async ({ path, body, principal }, { db, now }) => {
  const row = await changeCardText(db, principal, path.card_id, body, now());
  if (!row) throw noCard();
  return { status: 200, body: cardBody(row) };
};

export const deleteCard: GeneralHandlers['deleteCard'] = async ({ path, principal }, { db, now }) => {
  if (!(await removeCard(db, principal, path.card_id, now()))) throw noCard();
  return { status: 204, body: undefined };
};

/**
 * One write (services/flashcards/reviews.ts). A retry with the same Idempotency-Key gets the stored first
 * response and records nothing. `reviewed_at` dates an offline review.
 */
export const reviewCard: GeneralHandlers['reviewCard'] = async ({ path, headers, body, principal }, { db, now }) => {
  const at = now();
  const reviewedAt = reviewTime(body.reviewed_at, at, 'body.reviewed_at');
  const request = {
    userId: principal.user_id,
    key: headers['Idempotency-Key'],
    operationId: 'reviewCard',
    body: { card_id: path.card_id, ...body },
    now: at,
  };
  return idempotently(
    db,
    request,
    async (trx) => {
      const recorded = await recordReview(
        trx,
        principal,
        { card_id: path.card_id, grade: body.grade as Grade, reviewedAt },
        at,
      );
      if (!recorded) throw noCard();
      return { status: 201 as const, body: reviewResultBody(recorded) };
    },
    { atomicAlone: true },
  );
};

/**
 * A batch of reviews (offline study synced at once), all or none, applied in the order they happened, whatever
 * order they were sent in (services/flashcards/reviews.ts).
 */
export const reviewCards: GeneralHandlers['reviewCards'] = async ({ headers, body, principal }, { db, now }) => {
  const at = now();
  const reviews = body.reviews.map((review, index) => ({
    card_id: review.card_id,
    grade: review.grade as Grade,
    reviewedAt: reviewTime(review.reviewed_at, at, `body.reviews.${index}.reviewed_at`),
  }));
  const request = {
    userId: principal.user_id,
    key: headers['Idempotency-Key'],
    operationId: 'reviewCards',
    body,
    now: at,
  };
  return idempotently(db, request, async (trx) => {
    const outcome = await recordReviews(trx, principal, reviews, at);
    if ('unknown' in outcome)
      throw problems.invalidRequest(
        outcome.unknown.map((index) => ({
          path: `body.reviews.${index}.card_id`,
          message: 'is not one of your cards',
        })),
      );
    return { status: 201 as const, body: { data: outcome.reviewed.map(reviewResultBody) } };
  });
};

/** The time a review happened: now, or the client's `reviewed_at` when it is inside the offline window. */

async function deckOrThrow(db: Db, userId: string, deckId: string, at: Date): Promise<DeckRow> {
  const row = await findDeck(db, userId, deckId, at);
  if (!row) throw noDeck();
  return row;
}
