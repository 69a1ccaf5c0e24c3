// XP from completed tasks (domain/xp.ts), over HTTP: on time earns once, re-closing and lateness earn nothing.
import assert from 'node:assert/strict';
import { TASK_ON_TIME_XP } from '../../../domain/xp.ts';
import { generalApp, type Student } from '../../support/general-app.ts';

type Api = Awaited<ReturnType<typeof generalApp>>['api'];
const HOUR_MS = 3_600_000;

const newTask = async (api: Api, owner: Student, dueInMs: number, extra: Record<string, unknown> = {}) =>
  (
    await api
      .post('/api/tasks')
      .set(owner.headers)
      .send({ title: 'Essay', course: null, due_at: new Date(Date.now() + dueInMs).toISOString(), ...extra })
      .expect(201)
  ).body;
const setStatus = (api: Api, owner: Student, id: string, status: 'open' | 'completed') =>
  api.patch(`/api/tasks/${id}`).set(owner.headers).send({ status }).expect(200);
const me = async (api: Api, owner: Student) =>
  (await api.get('/api/users/me').set(owner.headers).expect(200)).body as { xp: number; streak: number };

describe('xp from tasks', () => {
  it(`pays ${TASK_ON_TIME_XP} xp for a task completed on time, once: reopening and closing again earns nothing`, async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const task = await newTask(api, alice, 24 * HOUR_MS);
    await setStatus(api, alice, task.id, 'completed');
    const { xp, streak } = await me(api, alice);
    assert.deepEqual({ xp, streak }, { xp: TASK_ON_TIME_XP, streak: 1 });
    for (let i = 0; i < 3; i++) {
      await setStatus(api, alice, task.id, 'open');
      await setStatus(api, alice, task.id, 'completed');
    }
    assert.equal((await me(api, alice)).xp, TASK_ON_TIME_XP);
  });

  it('pays nothing for a task completed after its due time, and nothing if it is closed on time later', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const task = await newTask(api, alice, -HOUR_MS);
    await setStatus(api, alice, task.id, 'completed');
    assert.equal((await me(api, alice)).xp, 0);
    assert.equal((await me(api, alice)).streak, 1, 'a late task is still a study day');
    // Moving the due date after the fact does not turn the late completion into a paid one.
    await setStatus(api, alice, task.id, 'open');
    await api
      .patch(`/api/tasks/${task.id}`)
      .set(alice.headers)
      .send({ due_at: new Date(Date.now() + HOUR_MS).toISOString() })
      .expect(200);
    await setStatus(api, alice, task.id, 'completed');
    assert.equal((await me(api, alice)).xp, 0);
  });

  it('pays each occurrence of a recurring task once', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const first = await newTask(api, alice, 24 * HOUR_MS, { recurrence: 'FREQ=DAILY' });
    const closed = (await setStatus(api, alice, first.id, 'completed')).body;
    const next = (await api.get(`/api/tasks?status=open`).set(alice.headers).expect(200)).body.data.find(
      (t: { series_id: string }) => t.series_id === closed.series_id,
    );
    assert.ok(next, 'the next occurrence exists');
    await setStatus(api, alice, next.id, 'completed');
    assert.equal((await me(api, alice)).xp, 2 * TASK_ON_TIME_XP);
  });
});
