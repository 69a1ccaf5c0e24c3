// db/queries/flashcards.ts on the run's engine: decks page newest first and cards oldest first by (created_at, id),
// a deck's summary at a given instant, a batch of cards kept in the order given, and another student's ids finding
// nothing.
import assert from 'node:assert/strict';
import {
  deleteCard,
  deleteDeck,
  findCard,
  findDeck,
  insertCards,
  listCards,
  listDecks,
  lockCards,
  updateDeck,
  type AfterKey,
} from '../../../db/queries/flashcards.ts';
import { db, deleteNewStudents, newCard, newDeck, newStudent, reviewCard } from '../../support/query-fixture.ts';

const at = (iso: string) => new Date(iso);

/** Every page of `read`, `limit` at a time, following the cursor of each page's last row. */
async function walk<T extends { id: string }>(
  limit: number,
  read: (after: AfterKey | undefined) => Promise<T[]>,
  key: (row: T) => AfterKey,
): Promise<T[][]> {
  const pages: T[][] = [];
  let after: AfterKey | undefined;
  for (;;) {
    const rows = await read(after);
    pages.push(rows.slice(0, limit));
    if (rows.length <= limit) return pages;
    after = key(rows[limit - 1]!);
  }
}

describe('flashcard queries', () => {
  after(deleteNewStudents);

  it('pages decks newest first, decks created at the same instant by descending id, each once', async () => {
    const student = await newStudent();
    await newDeck(await newStudent(), at('2026-03-05T00:00:00Z'));
    const same = at('2026-03-02T00:00:00Z');
    const decks = [
      await newDeck(student, at('2026-03-01T00:00:00Z')),
      await newDeck(student, same),
      await newDeck(student, same),
      await newDeck(student, at('2026-03-03T00:00:00Z')),
    ];
    const now = new Date();
    const pages = await walk(
      2,
      (after) => listDecks(db(), student, now, { limit: 2, after }),
      (deck) => ({ at: deck.created_at, id: deck.id }),
    );
    const [sameHigh, sameLow] = [decks[1]!, decks[2]!].sort().reverse();
    assert.deepEqual(
      pages.map((page) => page.map((d) => d.id)),
      [
        [decks[3], sameHigh],
        [sameLow, decks[0]],
      ],
    );
  });

  it("summarises a deck's cards at the instant asked: due up to it, new, and the next due", async () => {
    const student = await newStudent();
    const deck = await newDeck(student);
    const reviewed = await newCard(student, deck, at('2026-03-01T00:00:00Z'));
    await reviewCard(student, reviewed.id, at('2026-03-01T10:00:00Z'), at('2026-03-04T00:00:00Z'));
    await newCard(student, deck, at('2026-03-02T00:00:00Z'));
    await newCard(student, deck, at('2026-03-03T00:00:00Z'));

    const summary = async (iso: string) => {
      const row = await findDeck(db(), student, deck, at(iso));
      return {
        cards: Number(row?.card_count),
        due: Number(row?.due_count),
        new: Number(row?.new_count),
        next: row?.next_due_at?.toISOString(),
      };
    };
    assert.deepEqual(await summary('2026-03-02T00:00:00Z'), {
      cards: 3,
      due: 1,
      new: 2,
      next: '2026-03-02T00:00:00.000Z',
    });
    assert.deepEqual(await summary('2026-03-04T00:00:00Z'), {
      cards: 3,
      due: 3,
      new: 2,
      next: '2026-03-02T00:00:00.000Z',
    });
    const empty = await findDeck(db(), student, await newDeck(student), at('2026-03-04T00:00:00Z'));
    assert.deepEqual([Number(empty?.card_count), Number(empty?.due_count), empty?.next_due_at], [0, 0, null]);
  });

  it('keeps a batch of cards in the order given, and pages cards oldest first with the due filter', async () => {
    const student = await newStudent();
    const deck = await newDeck(student);
    const early = await newCard(student, deck, at('2026-03-01T00:00:00Z'));
    const fronts = ['one', 'two', 'three', 'four', 'five'];
    const batch = await insertCards(
      db(),
      fronts.map((front) => ({ user_id: student, deck_id: deck, front, back: 'b' })),
      at('2026-03-02T00:00:00Z'),
    );
    assert.deepEqual(
      batch.map((c) => c.front),
      fronts,
    );

    const pages = await walk(
      2,
      (after) => listCards(db(), student, deck, { limit: 2, after }),
      (card) => ({ at: card.created_at, id: card.id }),
    );
    assert.deepEqual(
      pages.flat().map((c) => c.front),
      ['front', ...fronts],
    );
    assert.deepEqual(
      pages.map((page) => page.length),
      [2, 2, 2],
    );
    const due = await listCards(db(), student, deck, { limit: 10, dueAt: at('2026-03-01T23:59:59Z') });
    assert.deepEqual(
      due.map((c) => c.id),
      [early.id],
    );
  });

  it("finds, locks, changes and deletes none of another student's decks and cards", async () => {
    const owner = await newStudent();
    const stranger = await newStudent();
    const deck = await newDeck(owner);
    const card = await newCard(owner, deck, new Date());
    const strangersCard = await newCard(stranger, await newDeck(stranger), new Date());

    assert.equal(await findDeck(db(), stranger, deck, new Date()), undefined);
    assert.equal(await findCard(db(), stranger, card.id), undefined);
    assert.deepEqual((await listCards(db(), stranger, deck, { limit: 10 })).length, 0);
    assert.deepEqual(
      (await lockCards(db(), owner, [strangersCard.id, card.id])).map((c) => c.id),
      [card.id],
    );
    assert.equal(await updateDeck(db(), stranger, deck, { title: 'taken over' }, new Date()), false);
    assert.equal(await deleteCard(db(), stranger, card.id), false);
    assert.equal(await deleteDeck(db(), stranger, deck), false);
    assert.equal((await findCard(db(), owner, card.id))?.id, card.id);
    assert.equal(await deleteDeck(db(), owner, deck), true);
    assert.equal(await findCard(db(), owner, card.id), undefined);
  });
});
