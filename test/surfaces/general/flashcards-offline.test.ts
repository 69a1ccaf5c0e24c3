// Offline reviews: reviewCard with reviewed_at, and reviewCards, a synced batch applied in time order.
import assert from 'node:assert/strict';
import { generalApp, type Student } from '../../support/general-app.ts';
import { whileKeyHeld } from '../../support/idempotent-create.ts';
import { testDatabase } from '../../support/shared-database.ts';

type Api = Awaited<ReturnType<typeof generalApp>>['api'];
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

async function cardOf(api: Api, owner: Student): Promise<string> {
  const deck = (await api.post('/api/flashcards/decks').set(owner.headers).send({ title: 'Offline' }).expect(201)).body;
  return (
    await api
      .post(`/api/flashcards/decks/${deck.id}/cards`)
      .set(owner.headers)
      .send({ front: 'Q', back: 'A' })
      .expect(201)
  ).body.id;
}
const getCard = async (api: Api, owner: Student, id: string) =>
  (await api.get(`/api/flashcards/cards/${id}`).set(owner.headers).expect(200)).body;
const profile = async (api: Api, owner: Student) =>
  (await api.get('/api/users/me').set(owner.headers).expect(200)).body;

describe('reviewCard with reviewed_at (offline)', () => {
  it('counts the interval from reviewed_at', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const cardId = await cardOf(api, alice);
    const reviewedAt = ago(2 * DAY_MS);
    const { review, card } = (
      await api
        .post(`/api/flashcards/cards/${cardId}/reviews`)
        .set(alice.headers)
        .send({ grade: 4, reviewed_at: reviewedAt })
        .expect(201)
    ).body;
    assert.equal(review.reviewed_at, reviewedAt);
    assert.equal(card.last_reviewed_at, reviewedAt);
    assert.equal(new Date(card.next_due_at).getTime() - new Date(reviewedAt).getTime(), DAY_MS);
  });

  it('refuses a reviewed_at in the future or more than 7 days back with reviewed_at_out_of_range, recording nothing', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const cardId = await cardOf(api, alice);
    const before = await getCard(api, alice, cardId);
    for (const reviewed_at of [new Date(Date.now() + 60_000).toISOString(), ago(7 * DAY_MS + HOUR_MS)]) {
      const res = await api
        .post(`/api/flashcards/cards/${cardId}/reviews`)
        .set(alice.headers)
        .send({ grade: 4, reviewed_at })
        .expect(400);
      assert.equal(res.body.code, 'reviewed_at_out_of_range');
      assert.deepEqual(
        res.body.errors.map((e: { path: string }) => e.path),
        ['body.reviewed_at'],
      );
    }
    await api
      .post(`/api/flashcards/cards/${cardId}/reviews`)
      .set(alice.headers)
      .send({ grade: 4, reviewed_at: 'yesterday' })
      .expect(400);
    assert.deepEqual(await getCard(api, alice, cardId), before);
  });

  it('places a review older than the card’s last one in time: the card is as if the reviews came in time order', async () => {
    const { api, newStudent } = await generalApp();
    const [alice, bob] = await Promise.all([newStudent(), newStudent()]);
    const [aliceCard, bobCard] = await Promise.all([cardOf(api, alice), cardOf(api, bob)]);
    const [lastHour, yesterday] = [ago(HOUR_MS), ago(DAY_MS)];
    const review = async (owner: Student, cardId: string, grade: number, reviewedAt: string) =>
      (
        await api
          .post(`/api/flashcards/cards/${cardId}/reviews`)
          .set(owner.headers)
          .send({ grade, reviewed_at: reviewedAt })
          .expect(201)
      ).body;
    /** Eases are binary doubles (1.7 comes out as 1.7000000000000002). */
    const round = (ease: number) => Math.round(ease * 1e9) / 1e9;
    // Alice's reviews arrive newest first, Bob's in time order.
    await review(alice, aliceCard, 5, lastHour);
    const late = await review(alice, aliceCard, 0, yesterday);
    await review(bob, bobCard, 0, yesterday);
    await review(bob, bobCard, 5, lastHour);
    // The late review is logged with the step it takes at its place: a blackout on a new card.
    assert.deepEqual(
      [late.review.applied, round(late.review.ease), late.review.repetitions, late.review.interval_days],
      [true, 1.7, 0, 1],
    );
    assert.equal(late.review.next_due_at, new Date(Date.parse(yesterday) + DAY_MS).toISOString());
    // The card: failed yesterday, then passed an hour ago (the ease 1.7 + 0.1).
    const schedule = ({
      ease,
      repetitions,
      interval_days,
      next_due_at,
      last_reviewed_at,
    }: Record<string, unknown>) => ({
      ease: round(ease as number),
      repetitions,
      interval_days,
      next_due_at,
      last_reviewed_at,
    });
    assert.deepEqual(schedule(late.card), {
      ease: 1.8,
      repetitions: 1,
      interval_days: 1,
      next_due_at: new Date(Date.parse(lastHour) + DAY_MS).toISOString(),
      last_reviewed_at: lastHour,
    });
    assert.deepEqual(await getCard(api, alice, aliceCard), late.card);
    assert.deepEqual(schedule(await getCard(api, bob, bobCard)), schedule(late.card));
  });
});

describe('reviewCards', () => {
  it('applies the batch in reviewed_at order, whatever order it was sent in', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const cardId = await cardOf(api, alice);
    // Sent newest first: grade 0 (3 h ago), then 5 (2 days ago), then 5 (1 day ago). In time order: 5, 5, 0.
    const reviews = [
      { card_id: cardId, grade: 0, reviewed_at: ago(3 * HOUR_MS) },
      { card_id: cardId, grade: 5, reviewed_at: ago(2 * DAY_MS) },
      { card_id: cardId, grade: 5, reviewed_at: ago(DAY_MS) },
    ];
    const res = await api.post('/api/flashcards/reviews').set(alice.headers).send({ reviews }).expect(201);
    assert.deepEqual(
      res.body.data.map((r: { review: { grade: number; repetitions: number; applied: boolean } }) => [
        r.review.grade,
        r.review.repetitions,
        r.review.applied,
      ]),
      [
        [0, 0, true],
        [5, 1, true],
        [5, 2, true],
      ],
    );
    const card = await getCard(api, alice, cardId);
    assert.deepEqual(card, res.body.data[0].card, 'the card ends where the latest review put it');
    assert.equal(card.last_reviewed_at, reviews[0]!.reviewed_at);
  });

  it('refuses the whole batch for one unknown card or one time out of range, naming its index, and records nothing', async () => {
    const { api, newStudent } = await generalApp();
    const [alice, bob] = await Promise.all([newStudent(), newStudent()]);
    const cardId = await cardOf(api, alice);
    const bobsCard = await cardOf(api, bob);
    const before = await getCard(api, alice, cardId);
    const unknown = await api
      .post('/api/flashcards/reviews')
      .set(alice.headers)
      .send({
        reviews: [
          { card_id: cardId, grade: 5 },
          { card_id: bobsCard, grade: 4 },
        ],
      })
      .expect(400);
    assert.deepEqual(
      unknown.body.errors.map((e: { path: string }) => e.path),
      ['body.reviews.1.card_id'],
    );
    const late = await api
      .post('/api/flashcards/reviews')
      .set(alice.headers)
      .send({
        reviews: [
          { card_id: cardId, grade: 5 },
          { card_id: cardId, grade: 4, reviewed_at: ago(8 * DAY_MS) },
        ],
      })
      .expect(400);
    assert.equal(late.body.code, 'reviewed_at_out_of_range');
    assert.deepEqual(
      late.body.errors.map((e: { path: string }) => e.path),
      ['body.reviews.1.reviewed_at'],
    );
    assert.deepEqual(await getCard(api, alice, cardId), before);
    const { n } = await testDatabase()
      .db.selectFrom('flashcard_reviews')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('user_id', '=', alice.id)
      .executeTakeFirstOrThrow();
    assert.equal(Number(n), 0);
    assert.equal((await profile(api, alice)).xp, 0);
  });

  it('answers 401 without credentials and 403 without decks:write', async () => {
    const { api, newStudent } = await generalApp();
    await api.post('/api/flashcards/reviews').send({ reviews: [] }).expect(401);
    const reader = await newStudent({ scopes: ['decks:read'] });
    await api
      .post('/api/flashcards/reviews')
      .set(reader.headers)
      .send({ reviews: [{ card_id: await cardOf(api, await newStudent()), grade: 4 }] })
      .expect(403);
  });

  it('replays a retried batch with the same Idempotency-Key and records it once; another batch under that key is 422', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const cardId = await cardOf(api, alice);
    const body = {
      reviews: [
        { card_id: cardId, grade: 4, reviewed_at: ago(HOUR_MS) },
        { card_id: cardId, grade: 5 },
      ],
    };
    const first = await api
      .post('/api/flashcards/reviews')
      .set(alice.headers)
      .set('Idempotency-Key', 'sync-1')
      .send(body)
      .expect(201);
    const retry = await api
      .post('/api/flashcards/reviews')
      .set(alice.headers)
      .set('Idempotency-Key', 'sync-1')
      .send(body)
      .expect(201);
    assert.equal(retry.headers['idempotent-replayed'], 'true');
    assert.deepEqual(retry.body, first.body);
    const { n } = await testDatabase()
      .db.selectFrom('flashcard_reviews')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('user_id', '=', alice.id)
      .executeTakeFirstOrThrow();
    assert.equal(Number(n), 2);
    const other = await api
      .post('/api/flashcards/reviews')
      .set(alice.headers)
      .set('Idempotency-Key', 'sync-1')
      .send({ reviews: [{ card_id: cardId, grade: 1 }] })
      .expect(422);
    assert.equal(other.body.code, 'idempotency_key_reused');
  });

  it('answers 409 while the key is held by a sync still running (PostgreSQL), else replays', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const body = { reviews: [{ card_id: await cardOf(api, alice), grade: 4 }] };
    const send = () =>
      api.post('/api/flashcards/reviews').set(alice.headers).set('Idempotency-Key', 'sync-held').send(body);
    if (testDatabase().description.startsWith('PostgreSQL')) {
      await whileKeyHeld(alice.id, 'sync-held', async () =>
        assert.equal((await send().expect(409)).body.code, 'conflict'),
      );
      await send().expect(201);
    } else {
      const [a, b] = await Promise.all([send().expect(201), send().expect(201)]);
      assert.deepEqual(a.body, b.body);
    }
    const { n } = await testDatabase()
      .db.selectFrom('flashcard_reviews')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('user_id', '=', alice.id)
      .executeTakeFirstOrThrow();
    assert.equal(Number(n), 1);
  });
});
