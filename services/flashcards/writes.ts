// The deck and card writes that may move readiness (an exam linked to a deck counts its cards), each with its
// follow-ups (services/progress/). The flashcards handlers parse the request and shape the answer.
import type { Db } from '../../db/connect.ts';
import {
  deleteCard,
  deleteDeck,
  insertCard,
  insertCards,
  lockDeck,
  type CardRow,
} from '../../db/queries/flashcards.ts';
import { studentTransaction } from '../../db/student-transaction.ts';
import type { Student } from '../../server/auth/principal.ts';
import { progress } from '../progress/progress.ts';

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
  return intoDeck(trx, student, deckId, at, () => insertCard(trx, cardRow(student, deckId, card), at));
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
  return intoDeck(trx, student, deckId, at, () => insertCards(trx, rows, at));
}

/** Removes a deck of the student's with its cards; false when the student has no deck with this id. */
export async function removeDeck(db: Db, student: Student, deckId: string, at: Date): Promise<boolean> {
  return studentTransaction(db, student.user_id, async (trx) => {
    if (!(await deleteDeck(trx, student.user_id, deckId))) return false;
    await progress(trx, student, at);
    return true;
  });
}

/** Removes a card of the student's; false when the student has no card with this id. */
export async function removeCard(db: Db, student: Student, cardId: string, at: Date): Promise<boolean> {
  return studentTransaction(db, student.user_id, async (trx) => {
    if (!(await deleteCard(trx, student.user_id, cardId))) return false;
    await progress(trx, student, at);
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
