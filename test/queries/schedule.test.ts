// db/queries/schedule.ts on the run's engine: the week view's range bounds, the heads of open series (the one
// occurrence a series projects from), and due cards counted on the student's local date.
import assert from 'node:assert/strict';
import { cardsDueBefore, countOpenSeries, examsBetween, openSeriesHeads, tasksDueBetween } from '../../db/queries/schedule.ts';
import { insertNextOccurrence } from '../../db/queries/tasks.ts';
import { completeTask, db, deleteNewStudents, newCard, newDeck, newExam, newStudent, newTask } from '../support/query-fixture.ts';

const at = (iso: string) => new Date(iso);

describe('schedule queries', () => {
  after(deleteNewStudents);

  it('reads tasks due in [from, to), and exams from the first to the last date, both included', async () => {
    const student = await newStudent();
    const other = await newStudent();
    const first = await newTask(student, at('2026-03-02T00:00:00Z'));
    const last = await newTask(student, at('2026-03-08T23:59:59.999Z'));
    await newTask(student, at('2026-03-09T00:00:00Z'));
    await newTask(other, at('2026-03-03T00:00:00Z'));
    const tasks = await tasksDueBetween(db(), student, at('2026-03-02T00:00:00Z'), at('2026-03-09T00:00:00Z'));
    assert.deepEqual(tasks.map((t) => t.id), [first.id, last.id]);

    const monday = await newExam(student, '2026-03-02', 'b');
    const sundayB = await newExam(student, '2026-03-08', 'b');
    const sundayA = await newExam(student, '2026-03-08', 'a');
    await newExam(student, '2026-03-09');
    await newExam(other, '2026-03-04');
    const exams = await examsBetween(db(), student, '2026-03-02', '2026-03-08');
    assert.deepEqual(exams.map((e) => e.id), [monday.id, sundayA.id, sundayB.id]);
  });

  it('projects each open series from its head: the open occurrence without a successor, due before the end', async () => {
    const student = await newStudent();
    const daily = await newTask(student, at('2026-03-01T09:00:00Z'), { recurrence: 'FREQ=DAILY' });
    await newTask(student, at('2026-03-03T09:00:00Z'), { recurrence: 'FREQ=WEEKLY' });
    await newTask(student, at('2026-04-01T09:00:00Z'), { recurrence: 'FREQ=MONTHLY' }); // due after the week
    const closed = await newTask(student, at('2026-03-01T10:00:00Z'), { recurrence: 'FREQ=DAILY' });
    await completeTask(student, closed.id, at('2026-03-01T10:00:00Z'));
    await newTask(student, at('2026-03-01T11:00:00Z')); // one-off

    const heads = async (to: string, limit = 10) => (await openSeriesHeads(db(), student, at(to), limit)).map((h) => h.due_at.toISOString());
    assert.deepEqual(await heads('2026-03-10T00:00:00Z'), ['2026-03-01T09:00:00.000Z', '2026-03-03T09:00:00.000Z']);
    assert.deepEqual(await heads('2026-03-10T00:00:00Z', 1), ['2026-03-01T09:00:00.000Z']);
    assert.equal(await countOpenSeries(db(), student), 3);

    // Closing the daily head created its successor: the successor is the head now, and the series still counts once.
    await completeTask(student, daily.id, at('2026-03-01T09:00:00Z'));
    const next = { user_id: student, title: daily.title, course: null, notes: null, priority: 'normal' as const, recurrence: 'FREQ=DAILY' };
    await insertNextOccurrence(db(), { ...next, due_at: at('2026-03-02T09:00:00Z'), series_starts_at: daily.due_at, series_id: daily.id, previous_id: daily.id }, new Date());
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

    const count = async (zone: string) =>
      Object.fromEntries((await cardsDueBefore(db(), student, at('2026-03-09T00:00:00Z'), zone)).filter((r) => r.deck_id === deck).map((r) => [r.on_date, Number(r.due_count)]));
    assert.deepEqual(await count('UTC'), { '2026-03-02': 3 });
    assert.deepEqual(await count('Asia/Almaty'), { '2026-03-02': 2, '2026-03-03': 1 });
    assert.deepEqual(await count('America/Los_Angeles'), { '2026-03-02': 3 });
    assert.ok((await cardsDueBefore(db(), student, at('2026-03-09T00:00:00Z'), 'UTC')).every((r) => r.deck_id === deck));
  });
});
