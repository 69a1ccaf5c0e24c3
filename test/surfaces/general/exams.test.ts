import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { DateTime } from 'luxon';
import { generalApp, type Student } from '../../support/general-app.ts';
import { describeIdempotentCreate } from '../../support/idempotent-create.ts';
import { assertIdRefusals } from '../../support/refusals.ts';

type Api = Awaited<ReturnType<typeof generalApp>>['api'];

const inDays = (days: number, zone = 'UTC') => DateTime.now().setZone(zone).plus({ days }).toISODate()!;

async function createExam(api: Api, student: Student, fields: Record<string, unknown> = {}) {
  return (
    await api
      .post('/api/exams')
      .set(student.headers)
      .send({ subject: 'Organic chemistry', exam_date: inDays(10), ...fields })
      .expect(201)
  ).body;
}

async function deckWithCards(api: Api, student: Student, cards: number) {
  const deck = (await api.post('/api/flashcards/decks').set(student.headers).send({ title: 'Reactions' }).expect(201))
    .body;
  const ids: string[] = [];
  for (let i = 0; i < cards; i++) {
    ids.push(
      (
        await api
          .post(`/api/flashcards/decks/${deck.id}/cards`)
          .set(student.headers)
          .send({ front: `q${i}`, back: `a${i}` })
          .expect(201)
      ).body.id,
    );
  }
  return { deckId: deck.id as string, cardIds: ids };
}

async function createTask(api: Api, student: Student, completed = false) {
  const task = (
    await api
      .post('/api/tasks')
      .set(student.headers)
      .send({ title: 'Past paper', due_at: '2026-12-01T09:00:00Z', course: 'CHEM 201' })
      .expect(201)
  ).body;
  if (completed)
    await api.patch(`/api/tasks/${task.id}`).set(student.headers).send({ status: 'completed' }).expect(200);
  return task.id as string;
}

const examOf = (api: Api, owner: Student) => createExam(api, owner).then((exam) => exam.id as string);

describe('createExam', () => {
  it('plans an exam with its decks and tasks, and shows readiness with its components', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent({ time_zone: 'Asia/Almaty' });
    const { deckId, cardIds } = await deckWithCards(api, alice, 2);
    await api.post(`/api/flashcards/cards/${cardIds[0]}/reviews`).set(alice.headers).send({ grade: 4 }).expect(201);
    const taskIds = [await createTask(api, alice, true), await createTask(api, alice)];
    const exam = await createExam(api, alice, {
      exam_date: inDays(10, 'Asia/Almaty'),
      deck_ids: [deckId],
      task_ids: taskIds,
      notes: 'Room 204',
    });
    assert.equal(exam.days_left, 10);
    assert.deepEqual(exam.deck_ids, [deckId]);
    assert.deepEqual([...exam.task_ids].sort(), [...taskIds].sort());
    assert.equal(exam.notes, 'Room 204');
    const { readiness } = exam;
    // memory: one card just reviewed (R ≈ 1), one never (0); coverage 1 of 2; one study day (today) of 14.
    assert.ok(Math.abs(readiness.memory - 0.5) < 1e-3, `memory ${readiness.memory}`); // R decays from 1 in the seconds since the review
    assert.equal(readiness.coverage, 0.5);
    assert.equal(readiness.consistency, 1 / 14);
    assert.deepEqual(readiness.weights, { memory: 0.5, coverage: 0.3, consistency: 0.2 });
    assert.deepEqual(readiness.details, {
      cards: 2,
      cards_reviewed: 1,
      tasks: 2,
      tasks_completed: 1,
      study_days: 1,
      window_days: 14,
    });
    assert.equal(readiness.percent, 41); // 25 + 15 + 1.43
  });

  it('answers 400 naming a deck or task that is not the student’s, whether another student’s or unknown', async () => {
    const { api, newStudent } = await generalApp();
    const [alice, bob] = await Promise.all([newStudent(), newStudent()]);
    const { deckId: bobsDeck } = await deckWithCards(api, bob, 0);
    const bobsTask = await createTask(api, bob);
    const res = await api
      .post('/api/exams')
      .set(alice.headers)
      .send({ subject: 'Chemistry', exam_date: inDays(5), deck_ids: [bobsDeck], task_ids: [randomUUID(), bobsTask] })
      .expect(400);
    assert.deepEqual(
      res.body.errors.map((e: { path: string }) => e.path),
      ['body.deck_ids.0', 'body.task_ids.0', 'body.task_ids.1'],
    );
    assert.equal((await api.get('/api/exams').set(alice.headers).expect(200)).body.data.length, 0);
  });

  it('answers 400 for an invalid date or a missing subject, 401 without credentials, 403 without exams:write', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    await api.post('/api/exams').set(alice.headers).send({ subject: 'x', exam_date: '2026-02-30' }).expect(400);
    await api
      .post('/api/exams')
      .set(alice.headers)
      .send({ exam_date: inDays(3) })
      .expect(400);
    await api
      .post('/api/exams')
      .send({ subject: 'x', exam_date: inDays(3) })
      .expect(401);
    const reader = await newStudent({ scopes: ['exams:read'] });
    await api
      .post('/api/exams')
      .set(reader.headers)
      .send({ subject: 'x', exam_date: inDays(3) })
      .expect(403);
  });

  describeIdempotentCreate({
    prepare: async () => '/api/exams',
    body: { subject: 'Statistics', exam_date: '2026-12-15' },
    otherBody: { subject: 'Statistics', exam_date: '2026-12-16' },
    count: async (api, student) => (await api.get('/api/exams').set(student.headers).expect(200)).body.data.length,
  });
});

describe('listExams', () => {
  it("pages through the student's own exams, soonest first", async () => {
    const { api, newStudent } = await generalApp();
    const [alice, bob] = await Promise.all([newStudent(), newStudent()]);
    for (const [subject, days] of [
      ['later', 30],
      ['soon', 3],
      ['middle', 12],
    ] as const)
      await createExam(api, alice, { subject, exam_date: inDays(days) });
    await createExam(api, bob);
    const first = await api.get('/api/exams?limit=2').set(alice.headers).expect(200);
    assert.deepEqual(
      first.body.data.map((e: { subject: string }) => e.subject),
      ['soon', 'middle'],
    );
    assert.equal(first.body.has_more, true);
    assert.ok(first.body.data.every((e: { readiness: { percent: number } }) => Number.isInteger(e.readiness.percent)));
    const rest = await api.get(`/api/exams?limit=2&cursor=${first.body.next_cursor}`).set(alice.headers).expect(200);
    assert.deepEqual(
      rest.body.data.map((e: { subject: string }) => e.subject),
      ['later'],
    );
    assert.equal(rest.body.next_cursor, null);
  });

  it('answers 400 for a malformed cursor, 401 without credentials, 403 without exams:read', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const wrongShape = Buffer.from(JSON.stringify(['2026-13-45', randomUUID()])).toString('base64url');
    await api.get(`/api/exams?cursor=${wrongShape}`).set(alice.headers).expect(400);
    await api.get('/api/exams').expect(401);
    await api
      .get('/api/exams')
      .set((await newStudent({ scopes: ['decks:read'] })).headers)
      .expect(403);
  });
});

describe('getExam', () => {
  it('returns the exam as created, readiness recomputed', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const exam = await createExam(api, alice, { exam_date: inDays(-2) });
    const res = await api.get(`/api/exams/${exam.id}`).set(alice.headers).expect(200);
    assert.deepEqual(res.body, exam);
    assert.equal(res.body.days_left, -2);
    assert.deepEqual(
      [res.body.readiness.memory, res.body.readiness.coverage, res.body.readiness.percent],
      [null, null, 0],
    );
  });

  it('answers 401, 403, 404 (unknown and another student’s exam), 400 for a malformed id', () =>
    assertIdRefusals({ method: 'get', path: (id) => `/api/exams/${id}`, otherScope: 'decks:read', create: examOf }));
});

describe('updateExam', () => {
  it('changes the fields sent and replaces the linked sets; readiness follows', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const { deckId } = await deckWithCards(api, alice, 1);
    const done = await createTask(api, alice, true);
    const exam = await createExam(api, alice, { deck_ids: [deckId] });
    assert.equal(exam.readiness.memory, 0);
    const res = await api
      .patch(`/api/exams/${exam.id}`)
      .set(alice.headers)
      .send({ exam_date: inDays(20), deck_ids: [], task_ids: [done] })
      .expect(200);
    assert.equal(res.body.days_left, 20);
    assert.deepEqual([res.body.deck_ids, res.body.task_ids], [[], [done]]);
    assert.equal(res.body.readiness.memory, null);
    assert.equal(res.body.readiness.coverage, 1);
    assert.deepEqual(res.body.readiness.weights, { memory: 0, coverage: 0.6, consistency: 0.4 });
    assert.deepEqual((await api.get(`/api/exams/${exam.id}`).set(alice.headers).expect(200)).body, res.body);
  });

  it('answers 400 for an empty body or another student’s deck, and changes nothing', async () => {
    const { api, newStudent } = await generalApp();
    const [alice, bob] = await Promise.all([newStudent(), newStudent()]);
    const exam = await createExam(api, alice);
    const { deckId: bobsDeck } = await deckWithCards(api, bob, 0);
    await api.patch(`/api/exams/${exam.id}`).set(alice.headers).send({}).expect(400);
    await api
      .patch(`/api/exams/${exam.id}`)
      .set(alice.headers)
      .send({ subject: 'Renamed', deck_ids: [bobsDeck] })
      .expect(400);
    assert.deepEqual((await api.get(`/api/exams/${exam.id}`).set(alice.headers).expect(200)).body, exam);
  });

  it('answers 401, 403, 404 (unknown and another student’s exam), 400 for a malformed id', () =>
    assertIdRefusals({
      method: 'patch',
      path: (id) => `/api/exams/${id}`,
      body: { subject: 'Mine now' },
      otherScope: 'exams:read',
      create: examOf,
    }));
});

describe('deleteExam', () => {
  it('deletes the exam and its links, not the decks', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const { deckId } = await deckWithCards(api, alice, 1);
    const exam = await createExam(api, alice, { deck_ids: [deckId] });
    await api.delete(`/api/exams/${exam.id}`).set(alice.headers).expect(204);
    await api.get(`/api/exams/${exam.id}`).set(alice.headers).expect(404);
    await api.get(`/api/flashcards/decks/${deckId}`).set(alice.headers).expect(200);
  });

  it('drops a deleted deck from the exams it was linked to', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const { deckId } = await deckWithCards(api, alice, 1);
    const exam = await createExam(api, alice, { deck_ids: [deckId] });
    await api.delete(`/api/flashcards/decks/${deckId}`).set(alice.headers).expect(204);
    assert.deepEqual((await api.get(`/api/exams/${exam.id}`).set(alice.headers).expect(200)).body.deck_ids, []);
  });

  it("leaves another student's exam in place", async () => {
    const { api, newStudent } = await generalApp();
    const [alice, bob] = await Promise.all([newStudent(), newStudent()]);
    const exam = await createExam(api, alice);
    await api.delete(`/api/exams/${exam.id}`).set(bob.headers).expect(404);
    await api.get(`/api/exams/${exam.id}`).set(alice.headers).expect(200);
  });

  it('answers 401, 403, 404 (unknown and another student’s exam), 400 for a malformed id', () =>
    assertIdRefusals({ method: 'delete', path: (id) => `/api/exams/${id}`, otherScope: 'exams:read', create: examOf }));
});
