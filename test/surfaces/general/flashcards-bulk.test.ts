// createCards: many cards in one request, all or none, idempotent.
import assert from 'node:assert/strict';
import { generalApp, type Student } from '../../support/general-app.ts';
import { describeIdempotentCreate } from '../../support/idempotent-create.ts';
import { assertIdRefusals } from '../../support/refusals.ts';

type Api = Awaited<ReturnType<typeof generalApp>>['api'];

const deckOf = async (api: Api, owner: Student) =>
  (await api.post('/api/flashcards/decks').set(owner.headers).send({ title: 'Import' }).expect(201)).body.id as string;
const cardsOf = async (api: Api, owner: Student, deckId: string) =>
  (await api.get(`/api/flashcards/decks/${deckId}/cards?limit=100`).set(owner.headers).expect(200)).body.data as Array<{
    id: string;
    front: string;
    created_at: string;
  }>;
const numbered = (n: number) => Array.from({ length: n }, (_, i) => ({ front: `Q${i}`, back: `A${i}` }));

describe('createCards', () => {
  it('adds 500 cards in one request, in the order sent, each due at once', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const deckId = await deckOf(api, alice);
    const res = await api
      .post(`/api/flashcards/decks/${deckId}/cards/bulk`)
      .set(alice.headers)
      .send({ cards: numbered(500) })
      .expect(201);
    assert.equal(res.body.data.length, 500);
    assert.deepEqual(
      res.body.data.map((c: { front: string }) => c.front),
      numbered(500).map((c) => c.front),
    );
    for (const card of res.body.data)
      assert.deepEqual([card.deck_id, card.repetitions, card.next_due_at], [deckId, 0, card.created_at]);
    const deck = (await api.get(`/api/flashcards/decks/${deckId}`).set(alice.headers).expect(200)).body;
    assert.deepEqual([deck.card_count, deck.due_count, deck.new_count], [500, 500, 500]);
    // The deck lists them in the order sent too.
    assert.deepEqual(
      (await cardsOf(api, alice, deckId)).map((c) => c.front),
      numbered(100).map((c) => c.front),
    );
  });

  it('refuses the whole batch when one card is bad, naming its index, and adds none', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const deckId = await deckOf(api, alice);
    const cards = numbered(10);
    cards[7] = { front: '', back: 'no question' };
    const res = await api
      .post(`/api/flashcards/decks/${deckId}/cards/bulk`)
      .set(alice.headers)
      .send({ cards })
      .expect(400);
    assert.equal(res.body.code, 'invalid_request');
    assert.ok(
      res.body.errors.some((e: { path: string }) => /cards\.7\.front$/.test(e.path)),
      JSON.stringify(res.body.errors),
    );
    assert.equal((await cardsOf(api, alice, deckId)).length, 0);
    await api
      .post(`/api/flashcards/decks/${deckId}/cards/bulk`)
      .set(alice.headers)
      .send({ cards: numbered(501) })
      .expect(400);
    await api.post(`/api/flashcards/decks/${deckId}/cards/bulk`).set(alice.headers).send({ cards: [] }).expect(400);
    assert.equal((await cardsOf(api, alice, deckId)).length, 0);
  });

  it('answers 401, 403, 404 (unknown and another student’s deck), 400 for a malformed id', () =>
    assertIdRefusals({
      method: 'post',
      path: (id) => `/api/flashcards/decks/${id}/cards/bulk`,
      body: { cards: numbered(2) },
      otherScope: 'decks:read',
      create: deckOf,
    }));

  describeIdempotentCreate({
    prepare: async (api, student) => `/api/flashcards/decks/${await deckOf(api, student)}/cards/bulk`,
    body: { cards: numbered(3) },
    otherBody: { cards: numbered(4) },
    // Batches applied: the cards of one batch share their created_at.
    count: async (api, student, path) =>
      new Set((await cardsOf(api, student, path.split('/')[4]!)).map((c) => c.created_at)).size,
  });
});
