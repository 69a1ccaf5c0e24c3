import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { MAX_OPEN_SERIES } from '../../../domain/bounds.ts';
import { withinEventLoopBudget } from '../../support/event-loop-lag.ts';
import { generalApp, type Student } from '../../support/general-app.ts';
import { describeIdempotentCreate } from '../../support/idempotent-create.ts';
import { assertIdRefusals } from '../../support/refusals.ts';

type Api = Awaited<ReturnType<typeof generalApp>>['api'];

const newTask = (fields: Record<string, unknown> = {}) => ({
  title: 'Problem set 4',
  due_at: '2026-11-23T09:00:00Z',
  course: 'Linear Algebra',
  ...fields,
});

async function create(api: Api, student: Student, fields: Record<string, unknown> = {}) {
  return (await api.post('/api/tasks').set(student.headers).send(newTask(fields)).expect(201)).body;
}

async function tasksOf(api: Api, student: Student, query = '') {
  return (await api.get(`/api/tasks?limit=100${query}`).set(student.headers).expect(200)).body.data as Array<
    Record<string, any>
  >;
}

describe('createTask', () => {
  it('creates an open task with defaults, due_at in UTC', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const task = await create(api, alice, { due_at: '2026-11-23T14:00:00+05:00', course: null });
    assert.equal(task.title, 'Problem set 4');
    assert.equal(task.due_at, '2026-11-23T09:00:00.000Z');
    assert.equal(task.course, null);
    assert.equal(task.status, 'open');
    assert.equal(task.completed_at, null);
    assert.equal(task.priority, 'normal');
    assert.equal(task.notes, null);
    assert.equal(task.recurrence, null);
    assert.equal(task.series_id, null);
    const stored = await api.get(`/api/tasks/${task.id}`).set(alice.headers).expect(200);
    assert.deepEqual(stored.body, task);
  });

  it('starts a series with a recurring task (RRULE: prefix dropped)', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const task = await create(api, alice, {
      recurrence: 'RRULE:FREQ=WEEKLY;BYDAY=MO',
      priority: 'high',
      notes: 'Show the working.',
    });
    assert.equal(task.recurrence, 'FREQ=WEEKLY;BYDAY=MO');
    assert.equal(task.series_id, task.id);
    assert.equal(task.priority, 'high');
    assert.equal(task.notes, 'Show the working.');
  });

  it('answers 400 for a missing required field, an unknown field or a bad due_at', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const { course: _c, ...noCourse } = newTask();
    const missing = await api.post('/api/tasks').set(alice.headers).send(noCourse).expect(400);
    assert.equal(missing.body.code, 'invalid_request');
    await api
      .post('/api/tasks')
      .set(alice.headers)
      .send(newTask({ colour: 'red' }))
      .expect(400);
    await api
      .post('/api/tasks')
      .set(alice.headers)
      .send(newTask({ due_at: 'next monday' }))
      .expect(400);
    await api
      .post('/api/tasks')
      .set(alice.headers)
      .send(newTask({ priority: 'urgent' }))
      .expect(400);
    assert.deepEqual(await tasksOf(api, alice), []);
  });

  it('answers 400 with a clear message for an invalid recurrence rule, and creates nothing', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    // Syntax is the spec's pattern; what the pattern cannot say, the handler says in words.
    const res = await api
      .post('/api/tasks')
      .set(alice.headers)
      .send(newTask({ recurrence: 'FREQ=FORTNIGHTLY' }))
      .expect(400);
    assert.equal(res.body.errors[0].path, 'requestBody.recurrence');
    assert.match(res.body.errors[0].message, /^must match pattern/);
    const both = await api
      .post('/api/tasks')
      .set(alice.headers)
      .send(newTask({ recurrence: 'FREQ=DAILY;COUNT=2;UNTIL=20261231' }))
      .expect(400);
    assert.deepEqual(both.body.errors, [
      { path: 'body.recurrence', message: 'is not a valid recurrence rule: COUNT and UNTIL cannot be combined' },
    ]);
    const month = await api
      .post('/api/tasks')
      .set(alice.headers)
      .send(newTask({ recurrence: 'FREQ=YEARLY;BYMONTH=13' }))
      .expect(400);
    assert.match(month.body.errors[0].message, /BYMONTH takes numbers from 1 to 12/);
    assert.deepEqual(await tasksOf(api, alice), []);
  });

  it('answers 401 without credentials and 403 without tasks:write', async () => {
    const { api, newStudent } = await generalApp();
    await api.post('/api/tasks').send(newTask()).expect(401);
    const reader = await newStudent({ scopes: ['tasks:read'] });
    const res = await api.post('/api/tasks').set(reader.headers).send(newTask()).expect(403);
    assert.equal(res.body.code, 'insufficient_scope');
  });

  it('answers 405 for a method the path does not have, and 413 for a body over the limit', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const put = await api.put('/api/tasks').set(alice.headers).send(newTask()).expect(405);
    assert.equal(put.headers.allow, 'GET, HEAD, POST');
    await api
      .post('/api/tasks')
      .set(alice.headers)
      .send(newTask({ notes: 'x'.repeat(200 * 1024) }))
      .expect(413);
  });

  describe('Idempotency-Key: key order, students, refusals, expiry', () => {
    it('treats the same body with its fields in another order as the same request', async () => {
      const { api, newStudent } = await generalApp();
      const alice = await newStudent();
      const key = randomUUID();
      const first = await api
        .post('/api/tasks')
        .set(alice.headers)
        .set('Idempotency-Key', key)
        .send(newTask())
        .expect(201);
      assert.equal(first.headers['idempotent-replayed'], undefined);
      const { title, due_at, course } = newTask();
      const retry = await api
        .post('/api/tasks')
        .set(alice.headers)
        .set('Idempotency-Key', key)
        .send({ course, due_at, title })
        .expect(201);
      assert.equal(retry.headers['idempotent-replayed'], 'true');
      assert.deepEqual(retry.body, first.body);
      assert.equal((await tasksOf(api, alice)).length, 1);
    });

    it("keeps each student's keys apart", async () => {
      const { api, newStudent } = await generalApp();
      const [alice, bob] = [await newStudent(), await newStudent()];
      const key = randomUUID();
      await api.post('/api/tasks').set(alice.headers).set('Idempotency-Key', key).send(newTask()).expect(201);
      const other = await api
        .post('/api/tasks')
        .set(bob.headers)
        .set('Idempotency-Key', key)
        .send(newTask({ title: 'Bob' }))
        .expect(201);
      assert.equal(other.headers['idempotent-replayed'], undefined);
      assert.equal((await tasksOf(api, bob)).length, 1);
    });

    it('stores nothing for a refused request: the key stays usable', async () => {
      const { api, newStudent } = await generalApp();
      const alice = await newStudent();
      const key = randomUUID();
      await api
        .post('/api/tasks')
        .set(alice.headers)
        .set('Idempotency-Key', key)
        .send(newTask({ recurrence: 'FREQ=HOURLY' }))
        .expect(400);
      const created = await api
        .post('/api/tasks')
        .set(alice.headers)
        .set('Idempotency-Key', key)
        .send(newTask())
        .expect(201);
      assert.equal(created.headers['idempotent-replayed'], undefined);
    });

    it('forgets a key after 24 hours', async () => {
      const { api, db, newStudent } = await generalApp();
      const alice = await newStudent();
      const key = randomUUID();
      await api.post('/api/tasks').set(alice.headers).set('Idempotency-Key', key).send(newTask()).expect(201);
      const stored = await db
        .selectFrom('idempotency_keys')
        .select(['created_at', 'expires_at'])
        .where('user_id', '=', alice.id)
        .executeTakeFirstOrThrow();
      assert.equal(stored.expires_at.getTime() - stored.created_at.getTime(), 24 * 3600_000);
      await db
        .updateTable('idempotency_keys')
        .set({ expires_at: new Date(Date.now() - 1000) })
        .where('user_id', '=', alice.id)
        .execute();
      const again = await api
        .post('/api/tasks')
        .set(alice.headers)
        .set('Idempotency-Key', key)
        .send(newTask({ title: 'New' }))
        .expect(201);
      assert.equal(again.headers['idempotent-replayed'], undefined);
      assert.equal((await tasksOf(api, alice)).length, 2);
    });

    it('answers 400 for an empty or over-long key', async () => {
      const { api, newStudent } = await generalApp();
      const alice = await newStudent();
      await api
        .post('/api/tasks')
        .set(alice.headers)
        .set('Idempotency-Key', 'k'.repeat(256))
        .send(newTask())
        .expect(400);
    });
  });

  describeIdempotentCreate({
    prepare: async () => '/api/tasks',
    body: newTask(),
    otherBody: newTask({ title: 'Another' }),
    count: async (api, student) => (await tasksOf(api, student)).length,
  });
});

describe('listTasks', () => {
  it("lists only the student's tasks, by due_at then id", async () => {
    const { api, newStudent } = await generalApp();
    const [alice, bob] = [await newStudent(), await newStudent()];
    await create(api, alice, { title: 'later', due_at: '2026-11-25T09:00:00Z' });
    await create(api, alice, { title: 'sooner', due_at: '2026-11-24T09:00:00Z' });
    await create(api, bob, { title: 'bob' });
    const res = await api.get('/api/tasks').set(alice.headers).expect(200);
    assert.deepEqual(
      res.body.data.map((t: { title: string }) => t.title),
      ['sooner', 'later'],
    );
    assert.equal(res.body.has_more, false);
    assert.equal(res.body.next_cursor, null);
  });

  it('filters by status, course and due window (from inclusive, to exclusive)', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const a = await create(api, alice, { title: 'a', course: 'Physics', due_at: '2026-11-23T00:00:00Z' });
    await create(api, alice, { title: 'b', course: 'Physics', due_at: '2026-11-24T00:00:00Z' });
    await create(api, alice, { title: 'c', course: 'History', due_at: '2026-11-25T00:00:00Z' });
    await api.patch(`/api/tasks/${a.id}`).set(alice.headers).send({ status: 'completed' }).expect(200);
    const titles = async (query: string) => (await tasksOf(api, alice, query)).map((t) => t.title);
    assert.deepEqual(await titles('&status=completed'), ['a']);
    assert.deepEqual(await titles('&status=open'), ['b', 'c']);
    assert.deepEqual(await titles('&course=Physics'), ['a', 'b']);
    assert.deepEqual(await titles('&course=physics'), []);
    assert.deepEqual(await titles('&due_from=2026-11-23T00:00:00Z&due_to=2026-11-25T00:00:00Z'), ['a', 'b']);
    assert.deepEqual(await titles('&status=open&course=Physics&due_from=2026-11-23T12:00:00Z'), ['b']);
  });

  it('walks every page once: no duplicates, no gaps, ties on due_at broken by id', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const created: string[] = [];
    for (let i = 0; i < 7; i++)
      created.push((await create(api, alice, { title: `t${i}`, due_at: `2026-11-2${3 + (i % 3)}T09:00:00Z` })).id);
    const seen: Array<Record<string, any>> = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const body: { data: Array<Record<string, any>>; has_more: boolean; next_cursor: string | null } = (
        await api
          .get(`/api/tasks?limit=3${cursor ? `&cursor=${cursor}` : ''}`)
          .set(alice.headers)
          .expect(200)
      ).body;
      seen.push(...body.data);
      cursor = body.next_cursor;
      assert.equal(body.has_more, cursor !== null);
      pages++;
    } while (cursor);
    assert.equal(pages, 3);
    assert.deepEqual(seen.map((t) => t.id).sort(), [...created].sort());
    const keys = seen.map((t) => `${t.due_at}|${t.id}`);
    assert.deepEqual(keys, [...keys].sort());
  });

  it('answers 400 for a malformed cursor, a reversed due window or a bad limit', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const bad = await api.get('/api/tasks?cursor=not-a-cursor').set(alice.headers).expect(400);
    assert.equal(bad.body.errors[0].path, 'query.cursor');
    const forged = Buffer.from(JSON.stringify(['yesterday', 'x'])).toString('base64url');
    await api.get(`/api/tasks?cursor=${forged}`).set(alice.headers).expect(400);
    const reversed = await api
      .get('/api/tasks?due_from=2026-11-25T00:00:00Z&due_to=2026-11-24T00:00:00Z')
      .set(alice.headers)
      .expect(400);
    assert.equal(reversed.body.errors[0].path, 'query.due_to');
    await api.get('/api/tasks?limit=0').set(alice.headers).expect(400);
    await api.get('/api/tasks?status=done').set(alice.headers).expect(400);
  });

  it('answers 401 without credentials and 403 without tasks:read', async () => {
    const { api, newStudent } = await generalApp();
    await api.get('/api/tasks').expect(401);
    const writer = await newStudent({ scopes: ['tasks:write'] });
    await api.get('/api/tasks').set(writer.headers).expect(403);
  });
});

describe('getTask', () => {
  it("answers 401, 403 insufficient_scope, 404 for an unknown id and for another student's alike, 400 for a bad id", () =>
    assertIdRefusals({
      method: 'get',
      path: (id) => `/api/tasks/${id}`,
      otherScope: 'schedule:read',
      create: async (api, owner) => (await create(api, owner)).id,
    }));
});

describe('updateTask', () => {
  it('changes the fields sent and clears a nullable one with null', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const task = await create(api, alice, { notes: 'old' });
    const res = await api
      .patch(`/api/tasks/${task.id}`)
      .set(alice.headers)
      .send({ title: 'Problem set 5', due_at: '2026-11-24T10:30:00Z', priority: 'low', notes: null })
      .expect(200);
    assert.equal(res.body.title, 'Problem set 5');
    assert.equal(res.body.due_at, '2026-11-24T10:30:00.000Z');
    assert.equal(res.body.priority, 'low');
    assert.equal(res.body.notes, null);
    assert.equal(res.body.course, 'Linear Algebra');
    assert.ok(res.body.updated_at >= task.updated_at);
  });

  it('closes (sets completed_at), closes again as a no-op, and reopens (clears completed_at)', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const task = await create(api, alice);
    const closed = await api
      .patch(`/api/tasks/${task.id}`)
      .set(alice.headers)
      .send({ status: 'completed' })
      .expect(200);
    assert.equal(closed.body.status, 'completed');
    assert.ok(closed.body.completed_at);
    const again = await api.patch(`/api/tasks/${task.id}`).set(alice.headers).send({ status: 'completed' }).expect(200);
    assert.equal(again.body.completed_at, closed.body.completed_at);
    const reopened = await api.patch(`/api/tasks/${task.id}`).set(alice.headers).send({ status: 'open' }).expect(200);
    assert.equal(reopened.body.status, 'open');
    assert.equal(reopened.body.completed_at, null);
    assert.equal((await tasksOf(api, alice)).length, 1);
  });

  it('closing a recurring occurrence creates exactly one next occurrence, even after reopen and close', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const task = await create(api, alice, { recurrence: 'FREQ=WEEKLY;BYDAY=MO', priority: 'high' });
    await api.patch(`/api/tasks/${task.id}`).set(alice.headers).send({ status: 'completed' }).expect(200);
    await api.patch(`/api/tasks/${task.id}`).set(alice.headers).send({ status: 'completed' }).expect(200);
    await api.patch(`/api/tasks/${task.id}`).set(alice.headers).send({ status: 'open' }).expect(200);
    await api.patch(`/api/tasks/${task.id}`).set(alice.headers).send({ status: 'completed' }).expect(200);
    const all = await tasksOf(api, alice);
    assert.equal(all.length, 2);
    const next = all.find((t) => t.id !== task.id)!;
    assert.equal(next.due_at, '2026-11-30T09:00:00.000Z');
    assert.equal(next.status, 'open');
    assert.equal(next.series_id, task.id);
    assert.equal(next.recurrence, 'FREQ=WEEKLY;BYDAY=MO');
    assert.equal(next.priority, 'high');
  });

  it('two racing closes of one occurrence create one next occurrence', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const task = await create(api, alice, { recurrence: 'FREQ=DAILY' });
    const close = () => api.patch(`/api/tasks/${task.id}`).set(alice.headers).send({ status: 'completed' }).expect(200);
    await Promise.all([close(), close(), close()]);
    assert.equal((await tasksOf(api, alice)).length, 2);
  });

  // Each of these rules has no date for centuries or ever; unbounded, rrule walked to the year 9999 on the event loop
  // (26 s for the first), freezing every other request.
  for (const rule of [
    'FREQ=DAILY;BYWEEKNO=53;BYMONTH=6',
    'FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30',
    'FREQ=DAILY;BYSETPOS=366;BYMONTH=2',
  ]) {
    it(`refuses ${rule} as having no date, without blocking other requests`, async () => {
      const { api, newStudent } = await generalApp();
      const alice = await newStudent();
      // Warm: an operation's first request compiles its validators (once per process, not per request).
      const task = await create(api, alice);
      await api.patch(`/api/tasks/${task.id}`).set(alice.headers).send({ recurrence: 'FREQ=DAILY' }).expect(200);
      const created = await withinEventLoopBudget('a create', () =>
        api
          .post('/api/tasks')
          .set(alice.headers)
          .send(newTask({ recurrence: rule }))
          .expect(400),
      );
      assert.equal(created.body.errors[0].path, 'body.recurrence');
      assert.match(created.body.errors[0].message, /no date in the year after due_at/);
      const changed = await withinEventLoopBudget('a change', () =>
        api.patch(`/api/tasks/${task.id}`).set(alice.headers).send({ recurrence: rule }).expect(400),
      );
      assert.equal(changed.body.errors[0].path, 'body.recurrence');
    });

    it(`closes a stored series of ${rule} (moved to the year 9999) without blocking other requests, and ends it`, async () => {
      const { api, db, newStudent } = await generalApp();
      const alice = await newStudent();
      const tasks: string[] = [];
      for (let i = 0; i < 2; i++) {
        const task = await create(api, alice, { due_at: '0001-01-01T09:00:00Z', recurrence: 'FREQ=DAILY' });
        // A rule stored before rules were checked for dates; then the occurrence moved as far as it can go.
        await db.updateTable('tasks').set({ recurrence: rule }).where('id', '=', task.id).execute();
        await api
          .patch(`/api/tasks/${task.id}`)
          .set(alice.headers)
          .send({ due_at: '9999-12-30T09:00:00Z' })
          .expect(200);
        tasks.push(task.id);
      }
      await withinEventLoopBudget('a close', () =>
        api.patch(`/api/tasks/${tasks.pop()}`).set(alice.headers).send({ status: 'completed' }).expect(200),
      );
      // The closed one ended its series: only the task not closed (if the first close stayed in budget) is open.
      assert.deepEqual(
        (await tasksOf(api, alice, '&status=open')).map((t) => t.id),
        tasks,
      );
    });
  }

  it('stops when the rule is exhausted (COUNT)', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    let current = await create(api, alice, { recurrence: 'FREQ=DAILY;COUNT=2' });
    await api.patch(`/api/tasks/${current.id}`).set(alice.headers).send({ status: 'completed' }).expect(200);
    current = (await tasksOf(api, alice, '&status=open'))[0]!;
    assert.equal(current.due_at, '2026-11-24T09:00:00.000Z');
    await api.patch(`/api/tasks/${current.id}`).set(alice.headers).send({ status: 'completed' }).expect(200);
    assert.deepEqual(await tasksOf(api, alice, '&status=open'), []);
  });

  it("keeps a weekly 09:00 at 09:00 in the student's zone across the DST change", async () => {
    const { api, newStudent } = await generalApp();
    const berlin = await newStudent({ time_zone: 'Europe/Berlin' });
    const task = await create(api, berlin, { due_at: '2026-10-19T07:00:00Z', recurrence: 'FREQ=WEEKLY' }); // 09:00 CEST
    await api.patch(`/api/tasks/${task.id}`).set(berlin.headers).send({ status: 'completed' }).expect(200);
    const [next] = await tasksOf(api, berlin, '&status=open');
    assert.equal(next!.due_at, '2026-10-26T08:00:00.000Z'); // 09:00 CET
  });

  it('a new recurrence starts a series at this task; null ends it', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const task = await create(api, alice);
    const recurring = await api
      .patch(`/api/tasks/${task.id}`)
      .set(alice.headers)
      .send({ recurrence: 'FREQ=DAILY' })
      .expect(200);
    assert.equal(recurring.body.series_id, task.id);
    const ended = await api
      .patch(`/api/tasks/${task.id}`)
      .set(alice.headers)
      .send({ recurrence: null, status: 'completed' })
      .expect(200);
    assert.equal(ended.body.recurrence, null);
    assert.equal((await tasksOf(api, alice)).length, 1);
  });

  it('answers 400 for an empty patch, an invalid rule or an unknown status', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const task = await create(api, alice);
    await api.patch(`/api/tasks/${task.id}`).set(alice.headers).send({}).expect(400);
    const rule = await api
      .patch(`/api/tasks/${task.id}`)
      .set(alice.headers)
      .send({ recurrence: 'FREQ=WEEKLY;TZID=Europe/Berlin' })
      .expect(400);
    assert.equal(rule.body.errors[0].path, 'requestBody.recurrence', 'TZID is outside the pattern');
    const twice = await api
      .patch(`/api/tasks/${task.id}`)
      .set(alice.headers)
      .send({ recurrence: 'FREQ=WEEKLY;BYDAY=MO;BYDAY=TU' })
      .expect(400);
    assert.match(twice.body.errors[0].message, /BYDAY appears twice/);
    await api.patch(`/api/tasks/${task.id}`).set(alice.headers).send({ status: 'done' }).expect(400);
    await api
      .patch(`/api/tasks/${task.id}`)
      .set(alice.headers)
      .send({ notes: 'x'.repeat(200 * 1024) })
      .expect(413);
  });

  it("answers 401, 403, 404 for an unknown id and another student's alike, 400 for a bad id", () =>
    assertIdRefusals({
      method: 'patch',
      path: (id) => `/api/tasks/${id}`,
      body: { status: 'completed' },
      otherScope: 'tasks:read',
      create: async (api, owner) => (await create(api, owner)).id,
    }));

  it("leaves another student's task unchanged", async () => {
    const { api, newStudent } = await generalApp();
    const [alice, bob] = [await newStudent(), await newStudent()];
    const task = await create(api, alice);
    await api
      .patch(`/api/tasks/${task.id}`)
      .set(bob.headers)
      .send({ status: 'completed', title: 'mine now' })
      .expect(404);
    const still = (await api.get(`/api/tasks/${task.id}`).set(alice.headers).expect(200)).body;
    assert.deepEqual([still.status, still.title], ['open', task.title]);
  });
});

describe('deleteTask', () => {
  it('deletes the task; it is then 404', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const task = await create(api, alice);
    await api.delete(`/api/tasks/${task.id}`).set(alice.headers).expect(204);
    await api.get(`/api/tasks/${task.id}`).set(alice.headers).expect(404);
    await api.delete(`/api/tasks/${task.id}`).set(alice.headers).expect(404);
  });

  it("answers 401, 403, 404 for an unknown id and another student's alike, 400 for a bad id", () =>
    assertIdRefusals({
      method: 'delete',
      path: (id) => `/api/tasks/${id}`,
      otherScope: 'tasks:read',
      create: async (api, owner) => (await create(api, owner)).id,
    }));

  it("keeps another student's task", async () => {
    const { api, newStudent } = await generalApp();
    const [alice, bob] = [await newStudent(), await newStudent()];
    const task = await create(api, alice);
    await api.delete(`/api/tasks/${task.id}`).set(bob.headers).expect(404);
    await api.get(`/api/tasks/${task.id}`).set(alice.headers).expect(200);
  });
});

describe('open recurring series: at most MAX_OPEN_SERIES per student', () => {
  const weekly = (fields: Record<string, unknown> = {}) => newTask({ recurrence: 'FREQ=WEEKLY', ...fields });

  /** A student with MAX_OPEN_SERIES open recurring tasks, made through the API. */
  async function atTheLimit() {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const series: string[] = [];
    for (let i = 0; i < MAX_OPEN_SERIES; i++)
      series.push(
        (
          await api
            .post('/api/tasks')
            .set(alice.headers)
            .send(weekly({ title: `Series ${i}` }))
            .expect(201)
        ).body.id,
      );
    return { api, newStudent, alice, series };
  }

  it('refuses one more with 409 series_limit_reached; one-off tasks, closing a series and other students go on', async () => {
    const { api, newStudent, alice, series } = await atTheLimit();
    const refused = await api.post('/api/tasks').set(alice.headers).send(weekly()).expect(409);
    assert.equal(refused.body.code, 'series_limit_reached');
    assert.match(refused.body.detail, new RegExp(`${MAX_OPEN_SERIES} open recurring tasks`));
    await api.post('/api/tasks').set(alice.headers).send(newTask()).expect(201);
    // Closing an occurrence puts the next one in its place: the count stays at the limit.
    await api.patch(`/api/tasks/${series[0]}`).set(alice.headers).send({ status: 'completed' }).expect(200);
    assert.equal((await tasksOf(api, alice, '&status=open')).filter((t) => t.recurrence).length, MAX_OPEN_SERIES);
    const bob = await newStudent();
    await api.post('/api/tasks').set(bob.headers).send(weekly()).expect(201);
    // Removing a rule makes room for one.
    await api.patch(`/api/tasks/${series[1]}`).set(alice.headers).send({ recurrence: null }).expect(200);
    await api.post('/api/tasks').set(alice.headers).send(weekly()).expect(201);
    assert.equal(
      (await api.post('/api/tasks').set(alice.headers).send(weekly()).expect(409)).body.code,
      'series_limit_reached',
    );
  });

  it('refuses a rule on one more open task, and reopening one more, but not a new rule on a series already counted', async () => {
    const { api, alice, series } = await atTheLimit();
    const oneOff = await create(api, alice);
    const refused = await api
      .patch(`/api/tasks/${oneOff.id}`)
      .set(alice.headers)
      .send({ recurrence: 'FREQ=DAILY' })
      .expect(409);
    assert.equal(refused.body.code, 'series_limit_reached');
    assert.equal(
      (await api.get(`/api/tasks/${oneOff.id}`).set(alice.headers).expect(200)).body.recurrence,
      null,
      'nothing changed',
    );
    await api.patch(`/api/tasks/${series[0]}`).set(alice.headers).send({ recurrence: 'FREQ=DAILY' }).expect(200);
    // A completed series that ended (its rule kept) counts again when reopened.
    await api.patch(`/api/tasks/${series[1]}`).set(alice.headers).send({ recurrence: null }).expect(200);
    await api.patch(`/api/tasks/${series[1]}`).set(alice.headers).send({ status: 'completed' }).expect(200);
    await api.patch(`/api/tasks/${series[1]}`).set(alice.headers).send({ recurrence: 'FREQ=WEEKLY' }).expect(200);
    await api.post('/api/tasks').set(alice.headers).send(weekly()).expect(201);
    assert.equal(
      (await api.patch(`/api/tasks/${series[1]}`).set(alice.headers).send({ status: 'open' }).expect(409)).body.code,
      'series_limit_reached',
    );
  });

  it('counts concurrent creates of one student in turn: one room, one created', async () => {
    const { api, alice, series } = await atTheLimit();
    await api.patch(`/api/tasks/${series[0]}`).set(alice.headers).send({ recurrence: null }).expect(200);
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => api.post('/api/tasks').set(alice.headers).send(weekly())),
    );
    assert.deepEqual(answers.map((r) => r.status).sort(), [201, 409, 409, 409]);
  });
});
