// The deck and card writes, each with the event that tells of it (deck.* and card.*, which the sync's pull follows)
// and, for those that may move readiness (an exam linked to a deck counts its cards), its follow-ups
// (services/progress/). The flashcards handlers parse the request and shape the answer.
import type { Db } from '../../db/connect.ts';
import {
  deleteCard,
  deleteDeck,
  findCard,
  findDeck,
  insertCard,
  insertCards,
  lockDeck,
  updateCardText,
  updateDeck,
  type CardRow,
  type DeckChanges,
  type DeckRow,
} from '../../db/queries/flashcards.ts';
import { studentTransaction } from '../../db/student-transaction.ts';
import type { Student } from '../../server/auth/principal.ts';
import { emitEvent, emitEvents } from '../events/emit.ts';
import { progress } from '../progress/progress.ts';
import { cardBody, deckBody } from './card-body.ts';

export interface CardText {
  front: string;
  back: string;
}

/** Adds a card to the student's deck, in the caller's transaction; undefined when the student has no such deck. */
export async function addCard(
  trx: Db,
  student: Student,
  deckId: string,
  card: CardText,
  at: Date,
): Promise<CardRow | undefined> {
  return intoDeck(trx, student, deckId, at, async () => {
    const row = await insertCard(trx, cardRow(student, deckId, card), at);
    await emitEvent(trx, cardEvent('card.created', student, row, at));
    return row;
  });
}

/** Adds cards to the student's deck in one statement, in the caller's transaction; undefined as addCard. */
export async function addCards(
  trx: Db,
  student: Student,
  deckId: string,
  cards: CardText[],
  at: Date,
): Promise<CardRow[] | undefined> {
  const rows = cards.map((card) => cardRow(student, deckId, card));
  return intoDeck(trx, student, deckId, at, async () => {
    const inserted = await insertCards(trx, rows, at);
    await emitEvents(
      trx,
      inserted.map((row) => cardEvent('card.created', student, row, at)),
    );
    return inserted;
  });
}

/** Changes a deck of the student's; undefined when the student has no deck with this id. */
export async function changeDeck(
  db: Db,
  student: Student,
  deckId: string,
  changes: DeckChanges,
  at: Date,
): Promise<DeckRow | undefined> {
  return studentTransaction(db, student.user_id, async (trx) => {
    if (!(await updateDeck(trx, student.user_id, deckId, changes, at))) return undefined;
    const row = (await findDeck(trx, student.user_id, deckId, at))!;
    await emitEvent(trx, { type: 'deck.updated', studentId: student.user_id, data: { object: deckBody(row) }, at });
    return row;
  });
}

/** Changes a card's text; undefined when the student has no card with this id. */
export async function changeCardText(
  db: Db,
  student: Student,
  cardId: string,
  changes: Partial<CardText>,
  at: Date,
): Promise<CardRow | undefined> {
  return studentTransaction(db, student.user_id, async (trx) => {
    const row = await updateCardText(trx, student.user_id, cardId, changes, at);
    if (row) await emitEvent(trx, cardEvent('card.updated', student, row, at));
    return row;
  });
}

/** Removes a deck of the student's with its cards; false when the student has no deck with this id. */
export async function removeDeck(db: Db, student: Student, deckId: string, at: Date): Promise<boolean> {
  return studentTransaction(db, student.user_id, async (trx) => {
    // Read before it goes, for its event; its cards go with it, told by this one event.
    const deck = await findDeck(trx, student.user_id, deckId, at);
    if (!deck || !(await deleteDeck(trx, student.user_id, deckId))) return false;
    const deleted = { type: 'deck.deleted' as const, studentId: student.user_id, data: { object: deckBody(deck) }, at };
    await progress(trx, student, at, { event: () => deleted });
    return true;
  });
}

/** Removes a card of the student's; false when the student has no card with this id. */
export async function removeCard(db: Db, student: Student, cardId: string, at: Date): Promise<boolean> {
  return studentTransaction(db, student.user_id, async (trx) => {
    const card = await findCard(trx, student.user_id, cardId);
    if (!card || !(await deleteCard(trx, student.user_id, cardId))) return false;
    await progress(trx, student, at, { event: () => cardEvent('card.deleted', student, card, at) });
    return true;
  });
}

async function intoDeck<T>(
  trx: Db,
  student: Student,
  deckId: string,
  at: Date,
  insert: () => Promise<T>,
): Promise<T | undefined> {
  // Locked, so the deck cannot be deleted between this check and the insert.
  if (!(await lockDeck(trx, student.user_id, deckId))) return undefined;
  const inserted = await insert();
  await progress(trx, student, at);
  return inserted;
}

function cardRow(student: Student, deckId: string, card: CardText) {
  return { user_id: student.user_id, deck_id: deckId, front: card.front, back: card.back };
}

/** A card event: the card as the change left it (as it was, for a deletion). */
export function cardEvent<T extends 'card.created' | 'card.updated' | 'card.deleted'>(
  type: T,
  student: Student,
  row: CardRow,
  at: Date,
) {
  return { type, studentId: student.user_id, data: { object: cardBody(row) }, at };
}
