// db/queries/schedule.ts on the run's engine: the week view's one statement (its range bounds, the heads of open series
// (the one occurrence a series projects from), due cards counted on the student's local date) and the feed's heads.
import assert from 'node:assert/strict';
import { countOpenSeries, findWeekFacts, openSeriesHeads, type WeekRange } from '../../../db/queries/schedule.ts';
import { findTask } from '../../../db/queries/tasks.ts';
import { insertNextOccurrence } from '../../../db/queries/tasks.ts';
import {
  completeTask,
  db,
  deleteNewStudents,
  newCard,
  newDeck,
  newExam,
  newStudent,
  newTask,
} from '../../support/query-fixture.ts';

const at = (iso: string) => new Date(iso);

/** The week of 2026-03-02 (a Monday) to 2026-03-08 in UTC, seen on its Wednesday. */
const week: WeekRange = {
  from: at('2026-03-02T00:00:00Z'),
  to: at('2026-03-09T00:00:00Z'),
  firstDate: '2026-03-02',
  lastDate: '2026-03-08',
  today: '2026-03-04',
  zone: 'UTC',
  seriesLimit: 10,
};

describe('schedule queries', () => {
  after(deleteNewStudents);

  it('reads tasks due in [from, to), and exams from the first to the last date, both included', async () => {
    const student = await newStudent();
    const other = await newStudent();
    const first = await newTask(student, at('2026-03-02T00:00:00Z'));
    const last = await newTask(student, at('2026-03-08T23:59:59.999Z'));
    await newTask(student, at('2026-03-09T00:00:00Z'));
    await newTask(other, at('2026-03-03T00:00:00Z'));
    const { tasks } = await findWeekFacts(db(), student, week);
    assert.deepEqual(
      tasks.map((t) => t.id),
      [first.id, last.id],
    );
    // Read back as a task row, every instant a Date, as a task is read on its own.
    const alone = (await findTask(db(), student, first.id))!;
    assert.ok(tasks[0]!.due_at instanceof Date && tasks[0]!.created_at instanceof Date);
    assert.deepEqual(JSON.parse(JSON.stringify(tasks[0])), JSON.parse(JSON.stringify(alone)));

    const monday = await newExam(student, '2026-03-02', 'b');
    const sundayB = await newExam(student, '2026-03-08', 'b');
    const sundayA = await newExam(student, '2026-03-08', 'a');
    await newExam(student, '2026-03-09');
    await newExam(other, '2026-03-04');
    const { exams } = await findWeekFacts(db(), student, week);
    assert.deepEqual(
      exams.map((e) => e.id),
      [monday.id, sundayA.id, sundayB.id],
    );
    assert.deepEqual(exams[0], { id: monday.id, subject: 'b', exam_date: '2026-03-02' });
  });

  it('projects each open series from its head: the open occurrence without a successor, due before the end', async () => {
    const student = await newStudent();
    const daily = await newTask(student, at('2026-03-01T09:00:00Z'), { recurrence: 'FREQ=DAILY' });
    await newTask(student, at('2026-03-03T09:00:00Z'), { recurrence: 'FREQ=WEEKLY' });
    await newTask(student, at('2026-04-01T09:00:00Z'), { recurrence: 'FREQ=MONTHLY' }); // due after the week
    const closed = await newTask(student, at('2026-03-01T10:00:00Z'), { recurrence: 'FREQ=DAILY' });
    await completeTask(student, closed.id, at('2026-03-01T10:00:00Z'));
    await newTask(student, at('2026-03-01T11:00:00Z')); // one-off

    const heads = async (to: string, limit = 10) => {
      const feed = (await openSeriesHeads(db(), student, at(to), limit)).map((h) => h.due_at.toISOString());
      const { heads: viewed } = await findWeekFacts(db(), student, { ...week, to: at(to), seriesLimit: limit });
      assert.deepEqual(
        viewed.map((h) => h.due_at.toISOString()),
        feed,
        'the week view and the calendar feed find the same heads',
      );
      return feed;
    };
    assert.deepEqual(await heads('2026-03-10T00:00:00Z'), ['2026-03-01T09:00:00.000Z', '2026-03-03T09:00:00.000Z']);
    assert.deepEqual(await heads('2026-03-10T00:00:00Z', 1), ['2026-03-01T09:00:00.000Z']);
    assert.equal(await countOpenSeries(db(), student), 3);

    // Closing the daily head created its successor: the successor is the head now, and the series still counts once.
    await completeTask(student, daily.id, at('2026-03-01T09:00:00Z'));
    const next = {
      user_id: student,
      title: daily.title,
      course: null,
      notes: null,
      priority: 'normal' as const,
      recurrence: 'FREQ=DAILY',
    };
    await insertNextOccurrence(
      db(),
      {
        ...next,
        due_at: at('2026-03-02T09:00:00Z'),
        series_starts_at: daily.due_at,
        series_id: daily.id,
        previous_id: daily.id,
      },
      new Date(),
    );
    assert.deepEqual(await heads('2026-03-10T00:00:00Z'), ['2026-03-02T09:00:00.000Z', '2026-03-03T09:00:00.000Z']);
    assert.equal(await countOpenSeries(db(), student), 3);
  });

  it('counts cards due before the end per deck and local date in the zone asked (20:00Z is the next day in Almaty)', async () => {
    const student = await newStudent();
    const deck = await newDeck(student);
    await newCard(student, deck, at('2026-03-02T20:00:00Z'));
    await newCard(student, deck, at('2026-03-02T18:00:00Z'));
    await newCard(student, deck, at('2026-03-02T10:00:00Z'));
    await newCard(student, deck, at('2026-03-09T00:00:00Z')); // at the end: not counted
    const other = await newStudent();
    await newCard(other, await newDeck(other), at('2026-03-02T10:00:00Z'));

    const count = async (zone: string, today = week.today) =>
      Object.fromEntries(
        (await findWeekFacts(db(), student, { ...week, zone, today })).cards
          .filter((r) => r.deck_id === deck)
          .map((r) => [r.on_date, r.due_count]),
      );
    assert.deepEqual(await count('UTC'), { '2026-03-02': 3 });
    assert.deepEqual(await count('Asia/Almaty'), { '2026-03-02': 2, '2026-03-03': 1 });
    assert.deepEqual(await count('America/Los_Angeles'), { '2026-03-02': 3 });
    assert.ok((await findWeekFacts(db(), student, week)).cards.every((r) => r.deck_id === deck));
    // The last day of the week is still "not over"; the day after it, the week shows no due cards.
    assert.deepEqual(await count('UTC', '2026-03-08'), { '2026-03-02': 3 });
    assert.deepEqual(await count('UTC', '2026-03-09'), {});
  });
});
