import assert from 'node:assert/strict';
import { DateTime } from 'luxon';
import { generalApp } from '../../support/general-app.ts';

const DAY_MS = 86_400_000;

describe('getTodayLoop', () => {
  it('tells a fresh student to start something, in their own time zone, with no readiness and no comeback plan', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent({ time_zone: 'Pacific/Kiritimati' });
    const res = await api.get('/api/today/loop').set(alice.headers).expect(200);
    assert.equal(res.body.next_action.kind, 'start_something');
    assert.equal(res.body.next_action.item, null);
    assert.deepEqual(res.body.readiness, []);
    assert.equal(res.body.comeback_plan, null);
    assert.equal(res.body.time_zone, 'Pacific/Kiritimati');
    // UTC+14: "today" is the student's date, which is not the UTC date for most of the day.
    assert.equal(res.body.today, DateTime.fromISO(res.body.generated_at).setZone('Pacific/Kiritimati').toISODate());
  });

  it('sends a student with an overdue task to that task, and shows it to no one else', async () => {
    const { api, newStudent } = await generalApp();
    const [alice, bob] = await Promise.all([newStudent(), newStudent()]);
    const due_at = new Date(Date.now() - 3 * DAY_MS).toISOString();
    const task = await api
      .post('/api/tasks')
      .set(alice.headers)
      .send({ title: 'Essay', course: 'History', due_at })
      .expect(201);

    const res = await api.get('/api/today/loop').set(alice.headers).expect(200);
    assert.equal(res.body.next_action.kind, 'do_task');
    assert.deepEqual(res.body.next_action.item, { type: 'task', id: task.body.id, title: 'Essay' });
    assert.match(res.body.next_action.reason, /^Essay for History was due 3 days ago; it comes before anything else/);

    const other = await api.get('/api/today/loop').set(bob.headers).expect(200);
    assert.equal(other.body.next_action.kind, 'start_something');
  });

  it('plans a comeback after missed days: the overdue cards spread up to the exam, new cards paused, readiness per exam', async () => {
    const { api, db, newStudent } = await generalApp();
    const zone = 'Asia/Almaty'; // no daylight saving: 5 × 24 hours ago is exactly 5 calendar days ago
    const alice = await newStudent({ time_zone: zone });
    const now = Date.now();
    const today = DateTime.fromMillis(now, { zone }).startOf('day');
    const deck = await db
      .insertInto('flashcard_decks')
      .values({ user_id: alice.id, title: 'Anatomy' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const reviewedAt = new Date(now - 5 * DAY_MS);
    await db
      .insertInto('flashcard_cards')
      .values([
        ...Array.from({ length: 10 }, (_, i) => ({
          deck_id: deck.id,
          user_id: alice.id,
          front: `bone ${i}`,
          back: 'answer',
          repetitions: 1,
          interval_days: 2,
          last_reviewed_at: reviewedAt,
          next_due_at: new Date(now - 3 * DAY_MS),
        })),
        { deck_id: deck.id, user_id: alice.id, front: 'new card', back: 'answer', next_due_at: new Date(now - DAY_MS) },
      ])
      .execute();
    await db
      .insertInto('flashcard_reviews')
      .values({
        user_id: alice.id,
        grade: 4,
        reviewed_at: reviewedAt,
        ease: 2.5,
        repetitions: 1,
        interval_days: 2,
        next_due_at: new Date(now - 3 * DAY_MS),
      })
      .execute();
    const examDate = today.plus({ days: 3 }).toISODate()!;
    const exam = await db
      .insertInto('exams')
      .values({ user_id: alice.id, subject: 'Biology', exam_date: examDate })
      .returning('id')
      .executeTakeFirstOrThrow();
    await db.insertInto('exam_decks').values({ exam_id: exam.id, deck_id: deck.id, user_id: alice.id }).execute();

    const res = await api.get('/api/today/loop').set(alice.headers).expect(200);
    const plan = res.body.comeback_plan;
    assert.equal(plan.missed_days, 4);
    assert.equal(plan.last_study_date, today.minus({ days: 5 }).toISODate());
    assert.deepEqual(plan.backlog, { overdue_cards: 10, overdue_tasks: 0 });
    assert.deepEqual(
      plan.days.map((d: { date: string; review_cards: number }) => [d.date, d.review_cards]),
      [0, 1, 2].map((i) => [today.plus({ days: i }).toISODate(), i === 0 ? 4 : 3]),
    );
    assert.equal(plan.exam_id, exam.id);
    assert.equal(plan.new_cards_resume_on, examDate);
    assert.deepEqual([plan.streak_action.kind, plan.streak_action.card_count], ['review_cards', 1]);

    // The new card is paused: only the 10 reviewed cards count.
    assert.equal(res.body.next_action.kind, 'review_cards');
    assert.deepEqual(res.body.next_action.item, { type: 'deck', id: deck.id, title: 'Anatomy' });
    assert.equal(res.body.next_action.card_count, 10);

    const [readiness] = res.body.readiness;
    assert.deepEqual([readiness.exam_id, readiness.exam_date, readiness.days_left], [exam.id, examDate, 3]);
    // One study day in the window of 14; 10 of 11 cards reviewed, each at exp(-5/2).
    assert.equal(readiness.readiness.details.study_days, 1);
    assert.equal(readiness.readiness.details.cards_reviewed, 10);
    assert.ok(
      Math.abs(readiness.readiness.memory - (10 * Math.exp(-2.5)) / 11) < 1e-4,
      String(readiness.readiness.memory),
    );
  });

  it('counts a review today as studied, so the streak action is done', async () => {
    const { api, db, newStudent } = await generalApp();
    const alice = await newStudent();
    const now = Date.now();
    await db
      .insertInto('flashcard_reviews')
      .values([
        {
          user_id: alice.id,
          grade: 4,
          reviewed_at: new Date(now - 4 * DAY_MS),
          ease: 2.5,
          repetitions: 1,
          interval_days: 1,
          next_due_at: new Date(now),
        },
        {
          user_id: alice.id,
          grade: 4,
          reviewed_at: new Date(now),
          ease: 2.5,
          repetitions: 2,
          interval_days: 6,
          next_due_at: new Date(now + 6 * DAY_MS),
        },
      ])
      .execute();
    const res = await api.get('/api/today/loop').set(alice.headers).expect(200);
    assert.equal(res.body.studied_today, true);
    assert.equal(res.body.comeback_plan.missed_days, 3);
    assert.equal(res.body.comeback_plan.streak_action.kind, 'rest');
  });

  it('counts a completed task as study activity, and its overdue open tasks as backlog', async () => {
    const { api, db, newStudent } = await generalApp();
    const alice = await newStudent();
    const now = Date.now();
    const at = (days: number) => new Date(now + days * DAY_MS);
    await db
      .insertInto('tasks')
      .values([
        {
          user_id: alice.id,
          title: 'Lab report',
          due_at: at(-3),
          status: 'completed',
          completed_at: at(-3),
          updated_at: at(-3),
        },
        { user_id: alice.id, title: 'Reading', due_at: at(-2), updated_at: at(-3) },
      ])
      .execute();
    const res = await api.get('/api/today/loop').set(alice.headers).expect(200);
    assert.equal(res.body.studied_today, false);
    assert.equal(res.body.comeback_plan.missed_days, 2);
    assert.deepEqual(res.body.comeback_plan.backlog, { overdue_cards: 0, overdue_tasks: 1 });
    assert.equal(res.body.comeback_plan.streak_action.kind, 'do_task');
    assert.equal(res.body.next_action.item.title, 'Reading');
  });

  it('answers 401 with WWW-Authenticate without credentials', async () => {
    const { api } = await generalApp();
    const res = await api.get('/api/today/loop').expect(401);
    assert.equal(res.headers['www-authenticate'], 'Bearer realm="general"');
  });

  it('answers 403 insufficient_scope when the token lacks today:read', async () => {
    const { api, newStudent } = await generalApp();
    const bob = await newStudent({ scopes: ['tasks:read', 'decks:read'] });
    const res = await api.get('/api/today/loop').set(bob.headers).expect(403);
    assert.equal(res.body.code, 'insufficient_scope');
    assert.match(String(res.headers['www-authenticate']), /scope="today:read"/);
  });
});
