// Decks and cards in the outbox: each write stores its event (deck.* and card.*) in the write's transaction, with
// the object as the REST operation answers it, checked against the spec's `webhooks`; a batch of cards or of reviews
// tells of each card once; a review that leaves the card as it was, and a refused write, tell of nothing.
import assert from 'node:assert/strict';
import { envelopeOf } from '../../../services/events/emit.ts';
import { assertEventConforms } from '../../support/event-contract.ts';
import { generalApp, type Student } from '../../support/general-app.ts';

type Ctx = Awaited<ReturnType<typeof generalApp>>;
type Event = { type: string; data: { object: { id: string } & Record<string, unknown> } };

async function eventsOf({ db }: Ctx, student: Student): Promise<Event[]> {
  const rows = await db
    .selectFrom('events')
    .select(['id', 'type', 'user_id', 'data', 'created_at'])
    .where('user_id', '=', student.id)
    .where((eb) => eb.or([eb('type', 'like', 'deck.%'), eb('type', 'like', 'card.%')]))
    .orderBy('txid')
    .orderBy('seq')
    .execute();
  const events = rows.map(envelopeOf);
  for (const event of events) assertEventConforms(event);
  return events as unknown as Event[];
}

describe('deck and card events', () => {
  it('stores deck.created/updated/deleted and card.created/updated/deleted with the objects the API answers', async () => {
    const ctx = await generalApp();
    const alice = await ctx.newStudent();
    const api = (method: 'post' | 'patch' | 'delete', path: string) => ctx.api[method](path).set(alice.headers);
    const deck = (await api('post', '/api/flashcards/decks').send({ title: 'Bones' }).expect(201)).body;
    const card = (
      await api('post', `/api/flashcards/decks/${deck.id}/cards`).send({ front: 'Arm', back: 'Humerus' }).expect(201)
    ).body;
    const batch = (
      await api('post', `/api/flashcards/decks/${deck.id}/cards/bulk`)
        .send({
          cards: [
            { front: 'Leg', back: 'Femur' },
            { front: 'Hand', back: 'Carpals' },
          ],
        })
        .expect(201)
    ).body.data;
    const renamed = (await api('patch', `/api/flashcards/decks/${deck.id}`).send({ title: 'Arm' }).expect(200)).body;
    const edited = (await api('patch', `/api/flashcards/cards/${card.id}`).send({ back: 'The humerus' }).expect(200))
      .body;
    const reviewed = (await api('post', `/api/flashcards/cards/${card.id}/reviews`).send({ grade: 4 }).expect(201)).body
      .card;
    const batchReviewed = (
      await api('post', '/api/flashcards/reviews')
        .send({
          reviews: [
            { card_id: batch[0].id, grade: 3 },
            { card_id: batch[0].id, grade: 5 },
            { card_id: batch[1].id, grade: 4 },
          ],
        })
        .expect(201)
    ).body.data;
    await api('delete', `/api/flashcards/cards/${batch[1].id}`).expect(204);
    await api('delete', `/api/flashcards/decks/${deck.id}`).expect(204);

    const events = await eventsOf(ctx, alice);
    assert.deepEqual(
      events.map((e) => [e.type, e.data.object.id]),
      [
        ['deck.created', deck.id],
        ['card.created', card.id],
        ['card.created', batch[0].id],
        ['card.created', batch[1].id],
        ['deck.updated', deck.id],
        ['card.updated', card.id],
        ['card.updated', card.id],
        ['card.updated', batch[0].id],
        ['card.updated', batch[1].id],
        ['card.deleted', batch[1].id],
        ['deck.deleted', deck.id],
      ],
    );
    // Each object is what the operation answered: the deck as created and renamed, the card as edited and reviewed,
    // a batch's card once, as the batch left it.
    assert.deepEqual(events[0]!.data.object, deck);
    assert.deepEqual(events[1]!.data.object, card);
    assert.deepEqual(events[4]!.data.object, renamed);
    assert.deepEqual(events[5]!.data.object, edited);
    assert.deepEqual(events[6]!.data.object, reviewed);
    assert.deepEqual(events[7]!.data.object, batchReviewed[1].card);
    assert.equal(events[10]!.data.object.card_count, 2);
  });

  it('a review older than the card’s last tells of the card it replayed; a refused write tells of nothing', async () => {
    const ctx = await generalApp();
    const [alice, bob] = await Promise.all([ctx.newStudent(), ctx.newStudent()]);
    const deck = (await ctx.api.post('/api/flashcards/decks').set(alice.headers).send({ title: 'Bones' }).expect(201))
      .body;
    const card = (
      await ctx.api
        .post(`/api/flashcards/decks/${deck.id}/cards`)
        .set(alice.headers)
        .send({ front: 'Arm', back: 'Humerus' })
        .expect(201)
    ).body;
    await ctx.api.post(`/api/flashcards/cards/${card.id}/reviews`).set(alice.headers).send({ grade: 4 }).expect(201);
    const before = (await eventsOf(ctx, alice)).length;
    const earlier = new Date(Date.now() - 3_600_000).toISOString();
    const late = await ctx.api
      .post(`/api/flashcards/cards/${card.id}/reviews`)
      .set(alice.headers)
      .send({ grade: 1, reviewed_at: earlier })
      .expect(201);
    const told = (await eventsOf(ctx, alice)).slice(before);
    assert.deepEqual(
      told.map((event) => [event.type, event.data]),
      [['card.updated', { object: late.body.card }]],
    );
    await ctx.api.patch(`/api/flashcards/cards/${card.id}`).set(bob.headers).send({ back: 'x' }).expect(404);
    await ctx.api.patch(`/api/flashcards/decks/${deck.id}`).set(bob.headers).send({ title: 'x' }).expect(404);
    await ctx.api.delete(`/api/flashcards/cards/${card.id}`).set(bob.headers).expect(404);
    await ctx.api.delete(`/api/flashcards/decks/${deck.id}`).set(bob.headers).expect(404);
    assert.equal((await eventsOf(ctx, alice)).length, before + 1);
    assert.deepEqual(await eventsOf(ctx, bob), []);
  });
});
