// XP from reviews and readiness milestones (domain/xp.ts), over HTTP: it moves on /api/users/me, and farming stops.
import assert from 'node:assert/strict';
import { DateTime } from 'luxon';
import { DAILY_CAP, READINESS_MILESTONES } from '../../../domain/xp.ts';
import { generalApp, type Student } from '../../support/general-app.ts';
import { testDatabase } from '../../support/shared-database.ts';

type Api = Awaited<ReturnType<typeof generalApp>>['api'];
const DAY_MS = 86_400_000;

async function deckWithCards(api: Api, owner: Student, n: number): Promise<{ deckId: string; cardIds: string[] }> {
  const deckId = (await api.post('/api/flashcards/decks').set(owner.headers).send({ title: 'XP' }).expect(201)).body.id;
  const cards = Array.from({ length: n }, (_, i) => ({ front: `Q${i}`, back: `A${i}` }));
  const created = (
    await api.post(`/api/flashcards/decks/${deckId}/cards/bulk`).set(owner.headers).send({ cards }).expect(201)
  ).body.data;
  return { deckId, cardIds: created.map((c: { id: string }) => c.id) };
}
const review = (api: Api, owner: Student, cardId: string, grade: number, reviewed_at?: string) =>
  api
    .post(`/api/flashcards/cards/${cardId}/reviews`)
    .set(owner.headers)
    .send({ grade, ...(reviewed_at ? { reviewed_at } : {}) })
    .expect(201);
const xpOf = async (api: Api, owner: Student) =>
  (await api.get('/api/users/me').set(owner.headers).expect(200)).body.xp as number;

describe('xp from reviews', () => {
  it('pays a review by grade, once per card and day: reviewing one card again earns nothing', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const { cardIds } = await deckWithCards(api, alice, 3);
    await review(api, alice, cardIds[0]!, 5);
    assert.equal(await xpOf(api, alice), 3);
    for (let i = 0; i < 5; i++) await review(api, alice, cardIds[0]!, 5);
    assert.equal(await xpOf(api, alice), 3, 'the same card again today earns 0');
    await review(api, alice, cardIds[1]!, 3);
    await review(api, alice, cardIds[2]!, 1);
    assert.equal(await xpOf(api, alice), 3 + 2 + 1);
  });

  it('applies reviews sent at once one after the other: each card earns once, each review moves its card, no request fails', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const { deckId, cardIds } = await deckWithCards(api, alice, 3);
    const in10Days = new Date(Date.now() + 10 * DAY_MS).toISOString().slice(0, 10);
    await api
      .post('/api/exams')
      .set(alice.headers)
      .send({ subject: 'XP', exam_date: in10Days, deck_ids: [deckId] })
      .expect(201);
    const rounds = 4;
    await Promise.all(cardIds.flatMap((cardId) => Array.from({ length: rounds }, () => review(api, alice, cardId, 4))));
    const awards = await testDatabase()
      .db.selectFrom('xp_awards')
      .select(['source', 'amount'])
      .where('user_id', '=', alice.id)
      .execute();
    assert.deepEqual(
      awards.filter((award) => award.source === 'review').map((award) => award.amount),
      [3, 3, 3],
    );
    assert.equal(
      await xpOf(api, alice),
      awards.reduce((sum, award) => sum + award.amount, 0),
      "the student's xp is its ledger's sum",
    );
    // Every review moved its card from where the one before left it: one sent without a time that waited for the lock
    // behind a later-stamped one is recorded just after it, so each card passed `rounds` times in a row.
    for (const cardId of cardIds) {
      const card = (await api.get(`/api/flashcards/cards/${cardId}`).set(alice.headers).expect(200)).body;
      const logged = await testDatabase()
        .db.selectFrom('flashcard_reviews')
        .select('applied')
        .where('card_id', '=', cardId)
        .execute();
      assert.equal(logged.length, rounds);
      assert.ok(logged.every((row) => row.applied));
      assert.equal(card.repetitions, rounds);
    }
  });

  it('counts an offline review on its own day, once', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const { cardIds } = await deckWithCards(api, alice, 1);
    const yesterday = new Date(Date.now() - DAY_MS).toISOString();
    await review(api, alice, cardIds[0]!, 4, yesterday);
    await review(api, alice, cardIds[0]!, 4);
    assert.equal(await xpOf(api, alice), 6, 'yesterday and today are two days');
    await review(api, alice, cardIds[0]!, 4, new Date(Date.now() - DAY_MS + 1000).toISOString());
    assert.equal(await xpOf(api, alice), 6, 'a second review yesterday earns nothing');
  });

  it(`stops at the daily cap of ${DAILY_CAP} xp, in a batch too`, async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const { cardIds } = await deckWithCards(api, alice, 60);
    const reviews = cardIds.map((card_id) => ({ card_id, grade: 5 }));
    await api.post('/api/flashcards/reviews').set(alice.headers).send({ reviews }).expect(201);
    assert.equal(await xpOf(api, alice), DAILY_CAP, `60 × 3 = 180 xp capped at ${DAILY_CAP}`);
  });

  it('awards each readiness milestone an exam reaches once, in the transaction that moved it', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const { deckId, cardIds } = await deckWithCards(api, alice, 1);
    const examDate = DateTime.utc().plus({ days: 5 }).toISODate();
    const exam = (
      await api
        .post('/api/exams')
        .set(alice.headers)
        .send({ subject: 'XP', exam_date: examDate, deck_ids: [deckId] })
        .expect(201)
    ).body;
    const before = await xpOf(api, alice);
    await review(api, alice, cardIds[0]!, 5);
    const { percent } = (await api.get(`/api/exams/${exam.id}`).set(alice.headers).expect(200)).body.readiness;
    const reached = READINESS_MILESTONES.filter((m) => percent >= m.percent);
    assert.ok(reached.length > 0, `readiness ${percent}% reaches a milestone`);
    assert.equal(await xpOf(api, alice), before + 3 + reached.reduce((sum, m) => sum + m.xp, 0));
    // Readiness dips (the reviewed card goes, a new one comes) and recovers (the new one reviewed): the milestones
    // already paid pay nothing more, only the review does.
    const after = await xpOf(api, alice);
    await api.delete(`/api/flashcards/cards/${cardIds[0]}`).set(alice.headers).expect(204);
    const fresh = (
      await api
        .post(`/api/flashcards/decks/${deckId}/cards`)
        .set(alice.headers)
        .send({ front: 'more', back: 'more' })
        .expect(201)
    ).body;
    const dipped = (await api.get(`/api/exams/${exam.id}`).set(alice.headers).expect(200)).body.readiness.percent;
    await review(api, alice, fresh.id, 5);
    const recovered = (await api.get(`/api/exams/${exam.id}`).set(alice.headers).expect(200)).body.readiness.percent;
    assert.ok(
      dipped < reached[0]!.percent && recovered >= reached[0]!.percent,
      `readiness ${percent} → ${dipped} → ${recovered}`,
    );
    assert.equal(await xpOf(api, alice), after + 3);
  });
});
