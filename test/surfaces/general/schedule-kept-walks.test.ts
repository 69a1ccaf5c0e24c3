// The week view keeps each series' walk through a week for its next view (domain/recurrence.ts, KeptWalks): an edit of
// the series shows at once, and a view that finds nothing kept still stays within the event-loop budget.
import assert from 'node:assert/strict';
import { keptWalks, WEEK_PROJECTED_MAX } from '../../../domain/recurrence.ts';
import { withinEventLoopBudget } from '../../support/event-loop-lag.ts';
import { generalApp } from '../../support/general-app.ts';
import { weekOf, type WeekDay } from '../../support/week-view.ts';

/** The projected occurrences of the week, as "title due_at". */
async function projected(...week: Parameters<typeof weekOf>): Promise<string[]> {
  return (await weekOf(...week)).flatMap((d) => d.projected_tasks.map((p) => `${p.title} ${p.due_at}`));
}

describe('getSchedule: walks kept between views', () => {
  it('shows an edited series on the next view of the same week: its rule, due time, title, and its end', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent({ time_zone: 'Europe/Berlin' });
    const task = (
      await api
        .post('/api/tasks')
        .set(alice.headers)
        .send({ title: 'Gym', course: null, due_at: '2026-11-02T17:00:00Z', recurrence: 'FREQ=WEEKLY;BYDAY=MO,TH' })
        .expect(201)
    ).body;
    const mondayAndThursday = ['Gym 2026-11-30T17:00:00.000Z', 'Gym 2026-12-03T17:00:00.000Z'];
    assert.deepEqual(await projected(api, alice, '2026-W49'), mondayAndThursday);
    assert.deepEqual(await projected(api, alice, '2026-W49'), mondayAndThursday, 'the same view again');

    const edit = (change: object) => api.patch(`/api/tasks/${task.id}`).set(alice.headers).send(change).expect(200);
    await edit({ recurrence: 'FREQ=WEEKLY;BYDAY=TU' });
    assert.deepEqual(await projected(api, alice, '2026-W49'), ['Gym 2026-12-01T17:00:00.000Z']);
    // The series' time of day is its start's: a new due time alone moves the open occurrence, not the series.
    await edit({ due_at: '2026-11-03T06:30:00Z' });
    assert.deepEqual(await projected(api, alice, '2026-W49'), ['Gym 2026-12-01T17:00:00.000Z']);
    await edit({ due_at: '2026-12-01T17:00:00Z' });
    assert.deepEqual(await projected(api, alice, '2026-W49'), [], "the open occurrence is the week's Tuesday");
    await edit({ due_at: '2026-11-03T06:30:00Z', recurrence: 'FREQ=WEEKLY;BYDAY=TU' });
    assert.deepEqual(await projected(api, alice, '2026-W49'), ['Gym 2026-12-01T06:30:00.000Z']);
    await edit({ title: 'Swim' });
    assert.deepEqual(await projected(api, alice, '2026-W49'), ['Swim 2026-12-01T06:30:00.000Z']);
    await edit({ recurrence: 'FREQ=WEEKLY;BYDAY=TU;UNTIL=20261130' });
    assert.deepEqual(await projected(api, alice, '2026-W49'), [], 'the series ends before the week');
    await edit({ recurrence: 'FREQ=DAILY;COUNT=3' });
    assert.deepEqual(await projected(api, alice, '2026-W45'), [
      'Swim 2026-11-04T06:30:00.000Z',
      'Swim 2026-11-05T06:30:00.000Z',
    ]);
    await edit({ status: 'completed' });
    assert.deepEqual(await projected(api, alice, '2026-W45'), ['Swim 2026-11-05T06:30:00.000Z'], 'one left to project');
  });

  it('keeps a view of 27 hourly series a year ahead within the event-loop budget with no walk kept', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    // As in schedule-projected.test.ts, whose warm-up views the week it measures: there the measured views may find the
    // walks kept; here every attempt walks every series, as a first view does.
    const hourly = `FREQ=YEARLY;BYDAY=MO,TU,WE,TH,FR,SA,SU;BYHOUR=${Array.from({ length: 24 }, (_, h) => h).join(',')}`;
    for (let i = 0; i < 27; i++) {
      await api
        .post('/api/tasks')
        .set(alice.headers)
        .send({ title: `Hourly ${i}`, course: null, due_at: '2026-11-27T10:00:00Z', recurrence: hourly })
        .expect(201);
    }
    await projected(api, alice, '2027-W48'); // warm: the operation's first request compiles its validators
    const days = await withinEventLoopBudget(
      'the week view',
      async () => {
        keptWalks.clear();
        return (await api.get('/api/schedule?start=2027-11-29').set(alice.headers).expect(200)).body.days as WeekDay[];
      },
      3,
    );
    assert.equal(days.flatMap((d) => d.projected_tasks).length, WEEK_PROJECTED_MAX);
  });
});
