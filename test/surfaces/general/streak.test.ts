// The study streak: a review or a completed task makes the day a study day; consecutive days grow the streak, a
// missed day lapses it. The profile, the daily loop and the partner leaderboards all read it the same way.
import assert from 'node:assert/strict';
import { DateTime } from 'luxon';
import { generalApp, type Student } from '../../support/general-app.ts';

describe('study streak (reviewCard, updateTask)', () => {
  let context: Awaited<ReturnType<typeof generalApp>>;
  before(async () => (context = await generalApp()));

  const localDay = (zone: string, offset: number) => DateTime.now().setZone(zone).plus({ days: offset }).toISODate()!;
  const streakOf = async (student: Student) =>
    (await context.api.get('/api/users/me').set(student.headers).expect(200)).body.streak as number;
  const setStreak = (student: Student, streak: number, lastStudyDate: string) =>
    context.db
      .updateTable('users')
      .set({ streak, last_study_date: lastStudyDate })
      .where('id', '=', student.id)
      .execute();

  async function reviewOneCard(student: Student) {
    const deck = (
      await context.api.post('/api/flashcards/decks').set(student.headers).send({ title: 'Streak deck' }).expect(201)
    ).body;
    const card = (
      await context.api
        .post(`/api/flashcards/decks/${deck.id}/cards`)
        .set(student.headers)
        .send({ front: 'Q', back: 'A' })
        .expect(201)
    ).body;
    await context.api
      .post(`/api/flashcards/cards/${card.id}/reviews`)
      .set(student.headers)
      .send({ grade: 4 })
      .expect(201);
    return card.id as string;
  }

  it('starts at 1 with the first review, and a second review the same day changes nothing', async () => {
    const student = await context.newStudent({ time_zone: 'Pacific/Kiritimati' });
    assert.equal(await streakOf(student), 0);
    const cardId = await reviewOneCard(student);
    assert.equal(await streakOf(student), 1);
    await context.api
      .post(`/api/flashcards/cards/${cardId}/reviews`)
      .set(student.headers)
      .send({ grade: 5 })
      .expect(201);
    assert.equal(await streakOf(student), 1);
  });

  it('grows by one when yesterday was a study day, counting a completed task as study', async () => {
    const student = await context.newStudent({ time_zone: 'Asia/Almaty' });
    await setStreak(student, 4, localDay('Asia/Almaty', -1));
    assert.equal(await streakOf(student), 4, 'a streak whose last day was yesterday is still alive');
    const task = (
      await context.api
        .post('/api/tasks')
        .set(student.headers)
        .send({ title: 'Read ch. 3', due_at: '2026-12-01T10:00:00Z', course: 'History' })
        .expect(201)
    ).body;
    await context.api.patch(`/api/tasks/${task.id}`).set(student.headers).send({ status: 'completed' }).expect(200);
    assert.equal(await streakOf(student), 5);
    const loop = await context.api.get('/api/today/loop').set(student.headers).expect(200);
    assert.equal(loop.body.streak, 5);
  });

  it('reads as 0 once a day was missed, and restarts at 1 with the next study day', async () => {
    const student = await context.newStudent({ time_zone: 'America/New_York' });
    await setStreak(student, 7, localDay('America/New_York', -3));
    assert.equal(await streakOf(student), 0);
    await reviewOneCard(student);
    assert.equal(await streakOf(student), 1);
  });
});
