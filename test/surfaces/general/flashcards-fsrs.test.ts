// FSRS decks over HTTP: the scheduler per deck, its parameters as stored, and what switching does to a card.
import assert from 'node:assert/strict';
import { generalApp, type Student } from '../../support/general-app.ts';

type Api = Awaited<ReturnType<typeof generalApp>>['api'];
const DAY_MS = 86_400_000;

const newDeck = async (api: Api, owner: Student, fields: Record<string, unknown>) =>
  (
    await api
      .post('/api/flashcards/decks')
      .set(owner.headers)
      .send({ title: 'FSRS', ...fields })
      .expect(201)
  ).body;
const newCard = async (api: Api, owner: Student, deckId: string) =>
  (
    await api
      .post(`/api/flashcards/decks/${deckId}/cards`)
      .set(owner.headers)
      .send({ front: 'Q', back: 'A' })
      .expect(201)
  ).body;
const review = async (api: Api, owner: Student, cardId: string, grade: number) =>
  (await api.post(`/api/flashcards/cards/${cardId}/reviews`).set(owner.headers).send({ grade }).expect(201)).body;

describe('FSRS decks', () => {
  it('schedules an FSRS deck’s cards with FSRS and stores the default parameters it uses', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const sm2 = await newDeck(api, alice, {});
    assert.deepEqual([sm2.scheduler, sm2.fsrs_parameters], ['sm2', null]);
    const deck = await newDeck(api, alice, { scheduler: 'fsrs' });
    assert.equal(deck.scheduler, 'fsrs');
    assert.deepEqual(
      [deck.fsrs_parameters.request_retention, deck.fsrs_parameters.maximum_interval, deck.fsrs_parameters.w.length],
      [0.9, 36500, 21],
    );
    const card = await newCard(api, alice, deck.id);
    assert.equal(card.fsrs, null);
    // Easy on a new card: FSRS-6's default initial stability for Easy is 8.2956 days, so 8 days (no fuzz).
    const { card: after, review: recorded } = await review(api, alice, card.id, 5);
    assert.deepEqual([after.fsrs.state, after.fsrs.stability, after.interval_days], ['review', 8.2956, 8]);
    assert.equal(new Date(after.next_due_at).getTime() - new Date(recorded.reviewed_at).getTime(), 8 * DAY_MS);
    assert.deepEqual([after.ease, after.repetitions], [2.5, 0], 'SM-2 parameters are left as they were');
  });

  it('returns the parameters as stored, the unset ones filled with the defaults, and refuses ones out of range', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const deck = await newDeck(api, alice, {
      scheduler: 'fsrs',
      fsrs_parameters: { request_retention: 0.85, maximum_interval: 365 },
    });
    assert.deepEqual([deck.fsrs_parameters.request_retention, deck.fsrs_parameters.maximum_interval], [0.85, 365]);
    assert.deepEqual(
      (await api.get(`/api/flashcards/decks/${deck.id}`).set(alice.headers).expect(200)).body.fsrs_parameters,
      deck.fsrs_parameters,
    );
    const w = deck.fsrs_parameters.w.map((x: number) => x + 0.001);
    const patched = (
      await api
        .patch(`/api/flashcards/decks/${deck.id}`)
        .set(alice.headers)
        .send({ fsrs_parameters: { w } })
        .expect(200)
    ).body;
    assert.deepEqual(patched.fsrs_parameters.w, w);
    await api
      .post('/api/flashcards/decks')
      .set(alice.headers)
      .send({ title: 'x', fsrs_parameters: { request_retention: 1.5 } })
      .expect(400);
    await api
      .post('/api/flashcards/decks')
      .set(alice.headers)
      .send({ title: 'x', fsrs_parameters: { w: [1, 2, 3] } })
      .expect(400);
    await api.post('/api/flashcards/decks').set(alice.headers).send({ title: 'x', scheduler: 'anki' }).expect(400);
  });

  it('switching keeps both schedules: SM-2 → FSRS starts a new FSRS memory, FSRS → SM-2 continues SM-2', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const deck = await newDeck(api, alice, {});
    const card = await newCard(api, alice, deck.id);
    const sm2 = (await review(api, alice, card.id, 5)).card;
    assert.deepEqual([sm2.repetitions, sm2.interval_days, sm2.fsrs], [1, 1, null]);

    const switched = (
      await api.patch(`/api/flashcards/decks/${deck.id}`).set(alice.headers).send({ scheduler: 'fsrs' }).expect(200)
    ).body;
    assert.equal(switched.fsrs_parameters.w.length, 21, 'switching stores the parameters it will use');
    assert.deepEqual(
      (await api.get(`/api/flashcards/cards/${card.id}`).set(alice.headers).expect(200)).body.next_due_at,
      sm2.next_due_at,
      'the due date stays until the next review',
    );
    const underFsrs = (await review(api, alice, card.id, 4)).card;
    assert.deepEqual(
      [underFsrs.fsrs.state, underFsrs.fsrs.reps, underFsrs.ease, underFsrs.repetitions],
      ['learning', 1, sm2.ease, 1],
    );

    await api.patch(`/api/flashcards/decks/${deck.id}`).set(alice.headers).send({ scheduler: 'sm2' }).expect(200);
    const back = (await review(api, alice, card.id, 5)).card;
    assert.deepEqual([back.repetitions, back.interval_days], [2, 6], 'SM-2 continues from its own parameters');
    assert.deepEqual(back.fsrs, underFsrs.fsrs, 'the FSRS memory waits for a switch back');
  });
});
