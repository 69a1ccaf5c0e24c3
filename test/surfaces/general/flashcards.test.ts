import assert from 'node:assert/strict';
import { generalApp, type Student } from '../../support/general-app.ts';
import { describeIdempotentCreate } from '../../support/idempotent-create.ts';
import { assertIdRefusals } from '../../support/refusals.ts';
import { testDatabase } from '../../support/shared-database.ts';

type Api = Awaited<ReturnType<typeof generalApp>>['api'];
const DAY_MS = 86_400_000;

async function createDeck(api: Api, student: Student, fields: Record<string, unknown> = {}) {
  return (
    await api
      .post('/api/flashcards/decks')
      .set(student.headers)
      .send({ title: 'Organic chemistry', ...fields })
      .expect(201)
  ).body;
}

async function createCard(api: Api, student: Student, deckId: string, fields: Record<string, unknown> = {}) {
  return (
    await api
      .post(`/api/flashcards/decks/${deckId}/cards`)
      .set(student.headers)
      .send({ front: 'SN2?', back: 'Bimolecular substitution.', ...fields })
      .expect(201)
  ).body;
}

async function review(api: Api, student: Student, cardId: string, grade: number) {
  return (await api.post(`/api/flashcards/cards/${cardId}/reviews`).set(student.headers).send({ grade }).expect(201))
    .body;
}

const deckOf = (api: Api, owner: Student) => createDeck(api, owner).then((deck) => deck.id as string);
const cardOf = async (api: Api, owner: Student) =>
  (await createCard(api, owner, await deckOf(api, owner))).id as string;

describe('createDeck', () => {
  it('creates an empty deck with defaults', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const deck = await createDeck(api, alice);
    assert.equal(deck.title, 'Organic chemistry');
    assert.equal(deck.description, '');
    assert.equal(deck.course, null);
    assert.deepEqual([deck.card_count, deck.due_count, deck.new_count, deck.next_due_at], [0, 0, 0, null]);
    assert.equal(deck.created_at, deck.updated_at);
  });

  it('answers 400 for a missing title or an unknown field, 401 without credentials, 403 without decks:write', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    await api.post('/api/flashcards/decks').set(alice.headers).send({ description: 'no title' }).expect(400);
    await api.post('/api/flashcards/decks').set(alice.headers).send({ title: 'x', colour: 'red' }).expect(400);
    await api.post('/api/flashcards/decks').send({ title: 'x' }).expect(401);
    const reader = await newStudent({ scopes: ['decks:read'] });
    assert.equal(
      (await api.post('/api/flashcards/decks').set(reader.headers).send({ title: 'x' }).expect(403)).body.code,
      'insufficient_scope',
    );
  });

  describeIdempotentCreate({
    prepare: async () => '/api/flashcards/decks',
    body: { title: 'Statistics' },
    otherBody: { title: 'Statistics II' },
    count: async (api, student) =>
      (await api.get('/api/flashcards/decks').set(student.headers).expect(200)).body.data.length,
  });
});

describe('listDecks', () => {
  it("pages through the student's own decks, newest first", async () => {
    const { api, newStudent } = await generalApp();
    const [alice, bob] = await Promise.all([newStudent(), newStudent()]);
    const created = [];
    for (const title of ['one', 'two', 'three']) created.push(await createDeck(api, alice, { title }));
    await createDeck(api, bob);
    const first = await api.get('/api/flashcards/decks?limit=2').set(alice.headers).expect(200);
    assert.deepEqual(
      first.body.data.map((d: { title: string }) => d.title),
      ['three', 'two'],
    );
    assert.equal(first.body.has_more, true);
    const second = await api
      .get(`/api/flashcards/decks?limit=2&cursor=${first.body.next_cursor}`)
      .set(alice.headers)
      .expect(200);
    assert.deepEqual(
      second.body.data.map((d: { id: string }) => d.id),
      [created[0].id],
    );
    assert.equal(second.body.has_more, false);
    assert.equal(second.body.next_cursor, null);
  });

  it('answers 400 for a malformed cursor or limit, 401 without credentials, 403 without decks:read', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    await api.get('/api/flashcards/decks?cursor=bm9wZQ').set(alice.headers).expect(400);
    const wrongShape = Buffer.from(JSON.stringify(['yesterday', 'not-a-uuid'])).toString('base64url');
    await api.get(`/api/flashcards/decks?cursor=${wrongShape}`).set(alice.headers).expect(400);
    await api.get('/api/flashcards/decks?limit=101').set(alice.headers).expect(400);
    await api.get('/api/flashcards/decks').expect(401);
    await api
      .get('/api/flashcards/decks')
      .set((await newStudent({ scopes: ['tasks:read'] })).headers)
      .expect(403);
  });
});

describe('getDeck', () => {
  it('summarises the cards: due now, never reviewed, the next due time', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const deck = await createDeck(api, alice, { course: 'CHEM 201', description: 'Reactions' });
    const [a, b] = [await createCard(api, alice, deck.id), await createCard(api, alice, deck.id)];
    const reviewed = await review(api, alice, b.id, 5);
    const res = await api.get(`/api/flashcards/decks/${deck.id}`).set(alice.headers).expect(200);
    assert.deepEqual([res.body.card_count, res.body.due_count, res.body.new_count], [2, 1, 1]);
    assert.equal(res.body.next_due_at, a.next_due_at);
    assert.ok(reviewed.card.next_due_at > a.next_due_at);
    assert.equal(res.body.course, 'CHEM 201');
  });

  it('answers 401, 403, 404 (unknown and another student’s deck), 400 for a malformed id', () =>
    assertIdRefusals({
      method: 'get',
      path: (id) => `/api/flashcards/decks/${id}`,
      otherScope: 'decks:write',
      create: deckOf,
    }));
});

describe('updateDeck', () => {
  it('changes the fields sent and clears course with null', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const deck = await createDeck(api, alice, { course: 'CHEM 201' });
    const res = await api
      .patch(`/api/flashcards/decks/${deck.id}`)
      .set(alice.headers)
      .send({ title: 'Renamed', course: null })
      .expect(200);
    assert.equal(res.body.title, 'Renamed');
    assert.equal(res.body.course, null);
    assert.ok(res.body.updated_at >= deck.updated_at);
    assert.deepEqual((await api.get(`/api/flashcards/decks/${deck.id}`).set(alice.headers).expect(200)).body, res.body);
  });

  it('answers 400 for an empty body or an empty title', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const deck = await createDeck(api, alice);
    await api.patch(`/api/flashcards/decks/${deck.id}`).set(alice.headers).send({}).expect(400);
    await api.patch(`/api/flashcards/decks/${deck.id}`).set(alice.headers).send({ title: '' }).expect(400);
  });

  it('answers 401, 403, 404 (unknown and another student’s deck), 400 for a malformed id', () =>
    assertIdRefusals({
      method: 'patch',
      path: (id) => `/api/flashcards/decks/${id}`,
      body: { title: 'Mine now' },
      otherScope: 'decks:read',
      create: deckOf,
    }));
});

describe('deleteDeck', () => {
  it('deletes the deck with its cards; its reviews stay as study history', async () => {
    const { api, db, newStudent } = await generalApp();
    const alice = await newStudent();
    const deck = await createDeck(api, alice);
    const card = await createCard(api, alice, deck.id);
    await review(api, alice, card.id, 4);
    await api.delete(`/api/flashcards/decks/${deck.id}`).set(alice.headers).expect(204);
    await api.get(`/api/flashcards/decks/${deck.id}`).set(alice.headers).expect(404);
    await api.get(`/api/flashcards/cards/${card.id}`).set(alice.headers).expect(404);
    const reviews = await db
      .selectFrom('flashcard_reviews')
      .select(['card_id', 'grade'])
      .where('user_id', '=', alice.id)
      .execute();
    assert.deepEqual(reviews, [{ card_id: null, grade: 4 }]);
  });

  it("leaves another student's deck in place", async () => {
    const { api, newStudent } = await generalApp();
    const [alice, bob] = await Promise.all([newStudent(), newStudent()]);
    const deck = await createDeck(api, alice);
    await api.delete(`/api/flashcards/decks/${deck.id}`).set(bob.headers).expect(404);
    await api.get(`/api/flashcards/decks/${deck.id}`).set(alice.headers).expect(200);
  });

  it('answers 401, 403, 404 (unknown and another student’s deck), 400 for a malformed id', () =>
    assertIdRefusals({
      method: 'delete',
      path: (id) => `/api/flashcards/decks/${id}`,
      otherScope: 'decks:read',
      create: deckOf,
    }));
});

describe('listCards', () => {
  it('lists the cards in the order added, pages them, and keeps only due ones with due=true', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const deck = await createDeck(api, alice);
    const cards = [];
    for (const front of ['a', 'b', 'c']) cards.push(await createCard(api, alice, deck.id, { front }));
    await review(api, alice, cards[1].id, 5);
    const first = await api.get(`/api/flashcards/decks/${deck.id}/cards?limit=2`).set(alice.headers).expect(200);
    assert.deepEqual(
      first.body.data.map((c: { front: string }) => c.front),
      ['a', 'b'],
    );
    const rest = await api
      .get(`/api/flashcards/decks/${deck.id}/cards?limit=2&cursor=${first.body.next_cursor}`)
      .set(alice.headers)
      .expect(200);
    assert.deepEqual(
      rest.body.data.map((c: { front: string }) => c.front),
      ['c'],
    );
    assert.equal(rest.body.has_more, false);
    const due = await api.get(`/api/flashcards/decks/${deck.id}/cards?due=true`).set(alice.headers).expect(200);
    assert.deepEqual(
      due.body.data.map((c: { front: string }) => c.front),
      ['a', 'c'],
    );
  });

  it('answers 400 for a malformed cursor', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const deck = await createDeck(api, alice);
    await api.get(`/api/flashcards/decks/${deck.id}/cards?cursor=%7B%7D`).set(alice.headers).expect(400);
  });

  it('answers 401, 403, 404 (unknown and another student’s deck), 400 for a malformed id', () =>
    assertIdRefusals({
      method: 'get',
      path: (id) => `/api/flashcards/decks/${id}/cards`,
      otherScope: 'exams:read',
      create: deckOf,
    }));
});

describe('createCard', () => {
  it('adds a new card, due at once, with SM-2 defaults', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const deck = await createDeck(api, alice);
    const card = await createCard(api, alice, deck.id);
    assert.equal(card.deck_id, deck.id);
    assert.deepEqual([card.ease, card.repetitions, card.interval_days, card.last_reviewed_at], [2.5, 0, 0, null]);
    assert.equal(card.next_due_at, card.created_at);
  });

  it('answers 400 without a back', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const deck = await createDeck(api, alice);
    await api.post(`/api/flashcards/decks/${deck.id}/cards`).set(alice.headers).send({ front: 'alone' }).expect(400);
  });

  it('answers 401, 403, 404 (unknown and another student’s deck), 400 for a malformed id', () =>
    assertIdRefusals({
      method: 'post',
      path: (id) => `/api/flashcards/decks/${id}/cards`,
      body: { front: 'f', back: 'b' },
      otherScope: 'decks:read',
      create: deckOf,
    }));

  describeIdempotentCreate({
    prepare: async (api, student) => `/api/flashcards/decks/${await deckOf(api, student)}/cards`,
    body: { front: 'f', back: 'b' },
    otherBody: { front: 'f', back: 'another b' },
    count: async (api, student, path) => (await api.get(path).set(student.headers).expect(200)).body.data.length,
  });
});

describe('getCard', () => {
  it('returns the card as stored', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const card = await createCard(api, alice, await deckOf(api, alice));
    assert.deepEqual((await api.get(`/api/flashcards/cards/${card.id}`).set(alice.headers).expect(200)).body, card);
  });

  it('answers 401, 403, 404 (unknown and another student’s card), 400 for a malformed id', () =>
    assertIdRefusals({
      method: 'get',
      path: (id) => `/api/flashcards/cards/${id}`,
      otherScope: 'tasks:read',
      create: cardOf,
    }));
});

describe('updateCard', () => {
  it('changes the text and leaves the SM-2 parameters alone', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const card = await createCard(api, alice, await deckOf(api, alice));
    const reviewed = (await review(api, alice, card.id, 5)).card;
    const res = await api
      .patch(`/api/flashcards/cards/${card.id}`)
      .set(alice.headers)
      .send({ back: 'Corrected' })
      .expect(200);
    assert.equal(res.body.back, 'Corrected');
    for (const field of ['ease', 'repetitions', 'interval_days', 'next_due_at', 'last_reviewed_at'])
      assert.deepEqual(res.body[field], reviewed[field], field);
  });

  it('answers 400 for an empty body or an SM-2 field', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const card = await createCard(api, alice, await deckOf(api, alice));
    await api.patch(`/api/flashcards/cards/${card.id}`).set(alice.headers).send({}).expect(400);
    await api.patch(`/api/flashcards/cards/${card.id}`).set(alice.headers).send({ ease: 3 }).expect(400);
  });

  it('answers 401, 403, 404 (unknown and another student’s card), 400 for a malformed id', () =>
    assertIdRefusals({
      method: 'patch',
      path: (id) => `/api/flashcards/cards/${id}`,
      body: { front: 'x' },
      otherScope: 'decks:read',
      create: cardOf,
    }));
});

describe('deleteCard', () => {
  it('deletes the card and the deck counts drop', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const deck = await createDeck(api, alice);
    const card = await createCard(api, alice, deck.id);
    await api.delete(`/api/flashcards/cards/${card.id}`).set(alice.headers).expect(204);
    await api.get(`/api/flashcards/cards/${card.id}`).set(alice.headers).expect(404);
    assert.equal((await api.get(`/api/flashcards/decks/${deck.id}`).set(alice.headers).expect(200)).body.card_count, 0);
  });

  it('answers 401, 403, 404 (unknown and another student’s card), 400 for a malformed id', () =>
    assertIdRefusals({
      method: 'delete',
      path: (id) => `/api/flashcards/cards/${id}`,
      otherScope: 'decks:read',
      create: cardOf,
    }));
});

describe('reviewCard', () => {
  it('moves the card as SM-2 says, review after review, and the response equals a later GET', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent({ time_zone: 'Asia/Almaty' });
    const card = await createCard(api, alice, await deckOf(api, alice));
    // grade 5 three times: intervals 1, 6, round(6 × 2.7) = 16; ease 2.6, 2.7, then 2.7 + 0.1 as a double.
    const expected = [
      { repetitions: 1, interval_days: 1, ease: 2.6 },
      { repetitions: 2, interval_days: 6, ease: 2.7 },
      { repetitions: 3, interval_days: 16, ease: 2.8000000000000003 },
    ];
    for (const step of expected) {
      const result = await review(api, alice, card.id, 5);
      const { card: after, review: recorded } = result;
      assert.deepEqual({ repetitions: after.repetitions, interval_days: after.interval_days, ease: after.ease }, step);
      assert.equal(after.last_reviewed_at, recorded.reviewed_at);
      assert.equal(
        new Date(after.next_due_at).getTime() - new Date(recorded.reviewed_at).getTime(),
        step.interval_days * DAY_MS,
      );
      assert.deepEqual(
        { ...recorded, id: undefined, reviewed_at: undefined, grade: undefined },
        {
          id: undefined,
          reviewed_at: undefined,
          grade: undefined,
          card_id: card.id,
          ...step,
          next_due_at: after.next_due_at,
          applied: true,
        },
      );
      assert.deepEqual((await api.get(`/api/flashcards/cards/${card.id}`).set(alice.headers).expect(200)).body, after);
    }
    // A blackout restarts the card: repetitions 0, 1 day, ease - 0.8.
    const failed = (await review(api, alice, card.id, 0)).card;
    assert.deepEqual([failed.repetitions, failed.interval_days], [0, 1]);
    assert.ok(Math.abs(failed.ease - 2.0) < 1e-9);
  });

  it('records each review with the parameters it produced', async () => {
    const { api, db, newStudent } = await generalApp();
    const alice = await newStudent();
    const card = await createCard(api, alice, await deckOf(api, alice));
    const first = await review(api, alice, card.id, 3);
    await review(api, alice, card.id, 1);
    const rows = await db
      .selectFrom('flashcard_reviews')
      .select(['id', 'grade', 'ease', 'repetitions', 'interval_days'])
      .where('card_id', '=', card.id)
      .orderBy('reviewed_at')
      .execute();
    assert.equal(rows.length, 2);
    assert.equal(rows[0]!.id, first.review.id);
    assert.deepEqual(
      rows.map((r) => [r.grade, r.repetitions, r.interval_days]),
      [
        [3, 1, 1],
        [1, 0, 1],
      ],
    );
    assert.ok(Math.abs(rows[1]!.ease - (2.5 - 0.14 - 0.54)) < 1e-9);
  });

  it('answers 400 for a grade outside 0..5 and changes nothing', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const card = await createCard(api, alice, await deckOf(api, alice));
    await api.post(`/api/flashcards/cards/${card.id}/reviews`).set(alice.headers).send({ grade: 6 }).expect(400);
    await api.post(`/api/flashcards/cards/${card.id}/reviews`).set(alice.headers).send({ grade: 2.5 }).expect(400);
    assert.deepEqual((await api.get(`/api/flashcards/cards/${card.id}`).set(alice.headers).expect(200)).body, card);
  });

  it('answers 401, 403, 404 (unknown and another student’s card), 400 for a malformed id', () =>
    assertIdRefusals({
      method: 'post',
      path: (id) => `/api/flashcards/cards/${id}/reviews`,
      body: { grade: 4 },
      otherScope: 'decks:read',
      create: cardOf,
    }));

  describeIdempotentCreate({
    prepare: async (api, student) => `/api/flashcards/cards/${await cardOf(api, student)}/reviews`,
    body: { grade: 4 },
    otherBody: { grade: 2 },
    count: async (_api, student) =>
      Number(
        (
          await testDatabase()
            .db.selectFrom('flashcard_reviews')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('user_id', '=', student.id)
            .executeTakeFirstOrThrow()
        ).n,
      ),
  });
});
