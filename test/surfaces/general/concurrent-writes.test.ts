// Concurrent writes of one student (issue 23, item 8). Three clients close, reopen, rename and delete several of
// one student's tasks and review its cards at the same time. Every such write touches the same derived rows (the
// student's row for xp and the streak, the readiness version, the outbox, the stats deltas); taken in different
// orders they deadlocked and the loser answered 500. Each student write now takes the student's lock first
// (db/student-transaction.ts), so none may answer 5xx. On the embedded database writes never overlap; the test runs
// there too as a check of the same answers.
import assert from 'node:assert/strict';
import { setPlan } from '../../../db/queries/users.ts';
import { STUDENT_TRANSACTION_ATTEMPTS, studentTransaction } from '../../../db/student-transaction.ts';
import { dependencyFailure } from '../../../server/http/problems.ts';
import { generalApp, type Student } from '../../support/general-app.ts';

type Api = Awaited<ReturnType<typeof generalApp>>['api'];

const CLIENTS = 3;
const TASKS = 6;
const ROUNDS = 3;
const DAY_MS = 86_400_000;

const inDays = (days: number) => new Date(Date.now() + days * DAY_MS).toISOString();

async function newTask(api: Api, student: Student, index: number): Promise<string> {
  const body = { title: `Essay ${index}`, course: 'Chemistry', due_at: inDays(1 + index) };
  return (await api.post('/api/tasks').set(student.headers).send(body).expect(201)).body.id;
}

describe('concurrent writes of one student', () => {
  it(`${CLIENTS} clients closing, reopening, updating and deleting ${TASKS} tasks and reviewing cards at once: no 5xx`, async function () {
    this.timeout(120_000);
    const { api, db, newStudent } = await generalApp();
    const student = await newStudent();
    // The plus plan's 600 writes a minute, so the rate limit does not stand between the clients and the locks.
    await setPlan(
      db,
      student.id,
      { plan: 'plus', contract_per_minute: null, contract_per_day: null, contract_ai_per_hour: null },
      new Date(),
    );
    await api
      .post('/api/exams')
      .set(student.headers)
      .send({ subject: 'Chemistry', exam_date: inDays(10).slice(0, 10) })
      .expect(201);
    const deck = (await api.post('/api/flashcards/decks').set(student.headers).send({ title: 'Chemistry' }).expect(201))
      .body;
    const cards: string[] = [];
    for (let i = 0; i < 3; i++)
      cards.push(
        (
          await api
            .post(`/api/flashcards/decks/${deck.id}/cards`)
            .set(student.headers)
            .send({ front: `Q${i}`, back: `A${i}` })
            .expect(201)
        ).body.id,
      );
    const tasks: string[] = [];
    for (let i = 0; i < TASKS; i++) tasks.push(await newTask(api, student, i));

    const statuses: number[] = [];
    const failures: string[] = [];
    const send = async (request: PromiseLike<{ status: number; body: { code?: string; detail?: string } }>) => {
      const response = await request;
      statuses.push(response.status);
      if (response.status >= 500) failures.push(`${response.status} ${response.body.code}: ${response.body.detail}`);
    };
    // Each client walks the tasks in its own order, so two clients lock the same rows in different orders.
    const client = async (n: number) => {
      const order = tasks.map((_, i) => tasks[(i * (n + 1) + n) % tasks.length]!);
      for (let round = 0; round < ROUNDS; round++) {
        for (const [i, id] of order.entries()) {
          await send(api.patch(`/api/tasks/${id}`).set(student.headers).send({ status: 'completed' }));
          // Grade 2 (forgotten) keeps the interval at a day: many passing grades in a row would push it past the year
          // 9999.
          await send(
            api
              .post(`/api/flashcards/cards/${cards[(i + n) % cards.length]}/reviews`)
              .set(student.headers)
              .send({ grade: 2 }),
          );
          await send(
            api
              .patch(`/api/tasks/${id}`)
              .set(student.headers)
              .send({ status: 'open', title: `Essay ${i} (${n}.${round})` }),
          );
        }
        // One task each round is deleted and replaced, so deletes race the closes of the other clients.
        const victim = order[round % order.length]!;
        await send(api.delete(`/api/tasks/${victim}`).set(student.headers));
        const replacement = await newTask(api, student, round);
        tasks[tasks.indexOf(victim)] = replacement;
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, (_, n) => client(n)));

    console.log(`      (${statuses.length} concurrent writes; ${failures.length} answered 5xx)`);
    assert.deepEqual(
      failures,
      [],
      `no write may answer 5xx; statuses seen: ${[...new Set(statuses)].sort().join(', ')}`,
    );
    // A delete racing a close of the same task may find it gone: 404 is an answer, anything else is a bug.
    assert.ok(
      statuses.every((status) => status < 300 || status === 404),
      `only 2xx and 404: ${[...new Set(statuses)].sort().join(', ')}`,
    );
  });
});

describe('studentTransaction', () => {
  const aborted = (code: string) => Object.assign(new Error(`aborted (${code})`), { code });

  it('runs a transaction the server aborted as a deadlock or a serialization failure once more, and only once', async () => {
    const { db, newStudent } = await generalApp();
    const student = await newStudent();
    for (const code of ['40P01', '40001']) {
      let runs = 0;
      const result = await studentTransaction(db, student.id, async () => {
        runs++;
        if (runs === 1) throw aborted(code);
        return 'done';
      });
      assert.deepEqual({ result, runs }, { result: 'done', runs: 2 });
    }
    let runs = 0;
    await assert.rejects(
      studentTransaction(db, student.id, async () => {
        runs++;
        throw aborted('40P01');
      }),
      { code: '40P01' },
    );
    assert.equal(runs, STUDENT_TRANSACTION_ATTEMPTS);
    runs = 0;
    await assert.rejects(
      studentTransaction(db, student.id, async () => {
        runs++;
        throw aborted('23505');
      }),
      { code: '23505' },
    );
    assert.equal(runs, 1, 'any other error is not retried');
  });

  it('answers a write aborted twice with a 503 and Retry-After, never a 500', () => {
    const problem = dependencyFailure(aborted('40P01'));
    assert.ok(problem);
    assert.equal(problem.status, 503);
    assert.equal(problem.code, 'service_unavailable');
    assert.equal(problem.extra.headers?.['Retry-After'], '1');
  });
});
