// A new deck of the student's, from the body createDeck takes, with its deck.created event: for the REST operation and
// the sync's deck_add alike.
import type { Db } from '../../db/connect.ts';
import { findDeck, insertDeck } from '../../db/queries/flashcards.ts';
import { fsrsParameters } from '../../domain/fsrs.ts';
import type { components } from '../../generated/general/types.ts';
import type { Student } from '../../server/auth/principal.ts';
import { emitEvent } from '../events/emit.ts';
import { deckBody } from './card-body.ts';

export async function addDeck(
  trx: Db,
  student: Student,
  body: components['schemas']['NewDeck'],
  at: Date,
): Promise<components['schemas']['Deck']> {
  const { fsrs_parameters, ...fields } = body;
  // Parameters are stored complete (defaults filled in) once given or once the deck uses FSRS, and returned as stored.
  const stored = fsrs_parameters || body.scheduler === 'fsrs' ? fsrsParameters(fsrs_parameters) : null;
  const id = await insertDeck(trx, { user_id: student.user_id, ...fields, fsrs_parameters: stored }, at);
  const deck = deckBody((await findDeck(trx, student.user_id, id, at))!);
  await emitEvent(trx, { type: 'deck.created', studentId: student.user_id, data: { object: deck }, at });
  return deck;
}
