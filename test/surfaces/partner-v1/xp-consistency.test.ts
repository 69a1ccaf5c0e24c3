// XP and streak, moved by the general surface (reviews, completed tasks), read the same on partner v1: the public
// profile shows the same xp, the university leaderboard the same xp and streak, as /api/users/me.
import assert from 'node:assert/strict';
import { generalApp, type Student } from '../../support/general-app.ts';
import { issueTestKey } from '../../support/partner-app.ts';

type Api = Awaited<ReturnType<typeof generalApp>>['api'];

async function v1View(api: Api, key: string, student: Student, universityId: string) {
  const board = (
    await api.get(`/api/v1/leaderboards/university/${universityId}?limit=100`).set('X-Service-API-Key', key).expect(200)
  ).body;
  const entry = board.find((e: { nickname: string | null }) => e.nickname === student.nickname);
  const publicProfile = (
    await api.get(`/api/v1/users/${student.nickname}/public`).set('X-Service-API-Key', key).expect(200)
  ).body;
  return { entry, publicProfile };
}

describe('xp and streak between the general surface and partner v1', () => {
  it('moves on both after reviews and completions, with the same values', async () => {
    const { api, db, newStudent } = await generalApp();
    const { key } = await issueTestKey();
    // The university with the fewest students (fewer than the board's 100), so the student's entry is on the board
    // whatever their xp.
    const university = await db
      .selectFrom('universities as u')
      .leftJoin('users', 'users.university_id', 'u.id')
      .select(['u.id', (eb) => eb.fn.count('users.id').as('members')])
      .groupBy('u.id')
      .orderBy('members')
      .orderBy('u.id')
      .executeTakeFirstOrThrow();
    assert.ok(Number(university.members) < 99);
    const alice = await newStudent();
    await api.patch('/api/users/me').set(alice.headers).send({ university_id: university.id }).expect(200);

    const deck = (await api.post('/api/flashcards/decks').set(alice.headers).send({ title: 'Board' }).expect(201)).body;
    const cards = (
      await api
        .post(`/api/flashcards/decks/${deck.id}/cards/bulk`)
        .set(alice.headers)
        .send({
          cards: [
            { front: 'a', back: 'b' },
            { front: 'c', back: 'd' },
          ],
        })
        .expect(201)
    ).body.data;
    for (const card of cards)
      await api.post(`/api/flashcards/cards/${card.id}/reviews`).set(alice.headers).send({ grade: 5 }).expect(201);
    const task = (
      await api
        .post('/api/tasks')
        .set(alice.headers)
        .send({ title: 'Read', course: null, due_at: new Date(Date.now() + 3_600_000).toISOString() })
        .expect(201)
    ).body;
    await api.patch(`/api/tasks/${task.id}`).set(alice.headers).send({ status: 'completed' }).expect(200);

    const me = (await api.get('/api/users/me').set(alice.headers).expect(200)).body;
    assert.deepEqual([me.xp, me.streak], [3 + 3 + 10, 1]);
    const { entry, publicProfile } = await v1View(api, key, alice, university.id);
    assert.ok(entry, 'the student is on the university leaderboard');
    assert.deepEqual({ xp: entry.xp, streak: entry.streak }, { xp: me.xp, streak: me.streak });
    assert.equal(publicProfile.xp, me.xp);
  });
});
