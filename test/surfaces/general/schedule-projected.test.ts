// The week view's projected occurrences of recurring tasks, over HTTP, across a DST change.
import assert from 'node:assert/strict';
import { WEEK_PROJECTED_MAX } from '../../../domain/recurrence.ts';
import { withinEventLoopBudget } from '../../support/event-loop-lag.ts';
import { generalApp } from '../../support/general-app.ts';
import { weekOf, type WeekDay } from '../../support/week-view.ts';

describe('getSchedule: projected occurrences', () => {
  it('shows the future occurrences of a recurring task, marked projected, at the same wall-clock time across DST', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent({ time_zone: 'Europe/Berlin' });
    // Daily at 09:00 in Berlin from Monday 19 October 2026; clocks go back on Sunday 25 October.
    const task = (
      await api
        .post('/api/tasks')
        .set(alice.headers)
        .send({ title: 'Vocabulary', course: null, due_at: '2026-10-19T07:00:00Z', recurrence: 'FREQ=DAILY' })
        .expect(201)
    ).body;

    const w43 = await weekOf(api, alice, '2026-W43');
    assert.deepEqual(
      w43[0]!.tasks.map((t) => t.id),
      [task.id],
      'the open occurrence is a real task',
    );
    assert.deepEqual(w43[0]!.projected_tasks, []);
    const projected = w43.slice(1).map((d) => d.projected_tasks.map((p) => p.due_at));
    assert.deepEqual(projected, [
      ['2026-10-20T07:00:00.000Z'],
      ['2026-10-21T07:00:00.000Z'],
      ['2026-10-22T07:00:00.000Z'],
      ['2026-10-23T07:00:00.000Z'],
      ['2026-10-24T07:00:00.000Z'],
      ['2026-10-25T08:00:00.000Z'],
    ]);
    const first = w43[1]!.projected_tasks[0]!;
    assert.deepEqual(first, {
      ...first,
      projected: true,
      series_id: task.series_id,
      title: 'Vocabulary',
      occurrence_key: `${task.series_id}/2026-10-20T07:00:00.000Z`,
    });
    assert.ok(!('id' in first), 'a projected occurrence has no id');

    const w44 = await weekOf(api, alice, '2026-W44');
    assert.deepEqual(
      w44.map((d) => d.projected_tasks.map((p) => p.due_at.slice(11, 16))),
      [['08:00'], ['08:00'], ['08:00'], ['08:00'], ['08:00'], ['08:00'], ['08:00']],
    );
    assert.ok(
      (await weekOf(api, alice, '2026-W42')).every((d) => d.projected_tasks.length === 0),
      'nothing before the series',
    );
  });

  it('moves the projection on when the open occurrence is completed, and drops it when the rule is removed', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const task = (
      await api
        .post('/api/tasks')
        .set(alice.headers)
        .send({ title: 'Gym', course: null, due_at: '2026-11-02T18:00:00Z', recurrence: 'FREQ=WEEKLY;BYDAY=MO,TH' })
        .expect(201)
    ).body;
    const before = await weekOf(api, alice, '2026-W45');
    assert.deepEqual(
      before.flatMap((d) => d.projected_tasks.map((p) => p.due_at)),
      ['2026-11-05T18:00:00.000Z'],
    );
    await api.patch(`/api/tasks/${task.id}`).set(alice.headers).send({ status: 'completed' }).expect(200);
    const after = await weekOf(api, alice, '2026-W45');
    assert.deepEqual(
      after.flatMap((d) => d.tasks.map((t) => t.due_at)),
      ['2026-11-02T18:00:00.000Z', '2026-11-05T18:00:00.000Z'],
      'Thursday is now a real task',
    );
    assert.deepEqual(
      after.flatMap((d) => d.projected_tasks),
      [],
    );
    const thursday = after[3]!.tasks[0]!;
    await api.patch(`/api/tasks/${thursday.id}`).set(alice.headers).send({ recurrence: null }).expect(200);
    assert.deepEqual(
      (await weekOf(api, alice, '2026-W46')).flatMap((d) => d.projected_tasks),
      [],
    );
  });

  it('projects 27 hourly series a year ahead without blocking the event loop (the week view has one budget)', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    // The report: 27 series of a rule due every hour, then the week a year later blocked the loop for 20 s.
    const hourly = `FREQ=YEARLY;BYDAY=MO,TU,WE,TH,FR,SA,SU;BYHOUR=${Array.from({ length: 24 }, (_, h) => h).join(',')}`;
    const ids: string[] = [];
    for (let i = 0; i < 27; i++) {
      ids.push(
        (
          await api
            .post('/api/tasks')
            .set(alice.headers)
            .send({ title: `Hourly ${i}`, course: null, due_at: '2026-11-27T10:00:00Z', recurrence: hourly })
            .expect(201)
        ).body.id,
      );
    }
    await weekOf(api, alice, '2027-W48'); // warm: the operation's first request compiles its validators
    // Three tries: on the embedded database the week's queries run on the event loop too, on a shared, noisy machine.
    const days = await withinEventLoopBudget(
      'the week view',
      async () =>
        (await api.get('/api/schedule?start=2027-11-29').set(alice.headers).expect(200)).body.days as WeekDay[],
      3,
    );
    const projected = days.flatMap((d) => d.projected_tasks);
    // 27 × 168 hours would be 4,536: the view shows the first WEEK_PROJECTED_MAX, series after series.
    assert.equal(projected.length, WEEK_PROJECTED_MAX);
    const bySeries = new Map<string, number>();
    for (const p of projected) bySeries.set(p.series_id, (bySeries.get(p.series_id) ?? 0) + 1);
    // Series are projected earliest open occurrence first (then by id) until the budget is spent: those shown are
    // whole.
    const first = [...ids].sort()[0]!;
    assert.equal(bySeries.get(first), 168, 'the first series, every hour of the week');
    assert.ok(
      [...bySeries.values()].every((n) => n <= 168),
      'at most a week of hours per series',
    );
    assert.equal(days[0]!.projected_tasks.filter((p) => p.series_id === first)[0]!.due_at, '2027-11-29T00:00:00.000Z');
  });

  it('keeps a week view of the costliest rules a student can store within the event-loop budget', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent({ time_zone: 'Europe/Berlin' });
    // A COUNT series is walked from its first date, and rrule rebuilds its tables of the year, week numbers included,
    // on every day it walks: each of these series costs rrule about 1,100 periods for a week three years on.
    for (let i = 0; i < 27; i++) {
      await api
        .post('/api/tasks')
        .set(alice.headers)
        .send({
          title: `Week one ${i}`,
          course: null,
          due_at: '2024-01-02T09:00:00Z',
          recurrence: 'FREQ=DAILY;BYWEEKNO=1;COUNT=9999',
        })
        .expect(201);
    }
    await weekOf(api, alice, '2026-W52'); // warm: the operation's first request compiles its validators
    const days = await withinEventLoopBudget(
      'the week view',
      async () => (await api.get('/api/schedule?week=2026-W53').set(alice.headers).expect(200)).body.days as WeekDay[],
      3,
    );
    assert.equal(days.length, 7);
  });
});
