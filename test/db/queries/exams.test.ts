// db/queries/exams.ts on the run's engine: exams page by (exam_date, id), links are the student's own (the database
// refuses a link across students, and one id in two letter cases is one link), and readiness reads its facts and
// counts study days in the student's zone.
import assert from 'node:assert/strict';
import {
  findExamPreparation,
  listExams,
  listUpcomingExams,
  ownedDeckIds,
  ownedTaskIds,
  replaceDeckLinks,
  replaceTaskLinks,
} from '../../../db/queries/exams.ts';
import { localDate } from '../../../domain/student-day.ts';
import {
  completeTask,
  db,
  deleteNewStudents,
  newCard,
  newDeck,
  newExam,
  newStudent,
  newTask,
  reviewCard,
} from '../../support/query-fixture.ts';

const at = (iso: string) => new Date(iso);

describe('exam queries', () => {
  after(deleteNewStudents);

  it('pages by (exam_date, id) with the date cursor, each exam once, and reads upcoming ones from a date on', async () => {
    const student = await newStudent();
    await newExam(await newStudent(), '2026-06-02');
    const dates = ['2026-06-03', '2026-06-01', '2026-06-02', '2026-06-02', '2026-06-02'];
    for (const date of dates) await newExam(student, date);

    const walked: Array<{ id: string; exam_date: string }> = [];
    let after: { date: string; id: string } | undefined;
    for (let pages = 0; ; pages++) {
      assert.ok(pages < dates.length, 'the cursor moves forward');
      const rows = await listExams(db(), student, { limit: 2, after });
      walked.push(...rows.slice(0, 2));
      if (rows.length <= 2) break;
      after = { date: rows[1]!.exam_date, id: rows[1]!.id };
    }
    const sorted = [...walked].sort((a, b) => a.exam_date.localeCompare(b.exam_date) || a.id.localeCompare(b.id));
    assert.deepEqual(walked, sorted);
    assert.deepEqual(
      walked.map((e) => e.exam_date),
      [...dates].sort(),
    );
    assert.equal(new Set(walked.map((e) => e.id)).size, dates.length);
    assert.deepEqual(
      (await listUpcomingExams(db(), student, '2026-06-02')).map((e) => e.exam_date),
      ['2026-06-02', '2026-06-02', '2026-06-02', '2026-06-03'],
    );
    assert.equal((await listUpcomingExams(db(), student, '2026-06-02', 1)).length, 1);
  });

  it("links only the student's own decks and tasks: one id in two letter cases is one link, a stranger's is refused", async () => {
    const student = await newStudent();
    const stranger = await newStudent();
    const exam = await newExam(student, '2026-06-01');
    const deck = await newDeck(student);
    const task = await newTask(student, at('2026-05-01T00:00:00Z'));
    const strangersDeck = await newDeck(stranger);
    const strangersTask = await newTask(stranger, at('2026-05-01T00:00:00Z'));

    assert.deepEqual(await ownedDeckIds(db(), student, [deck, strangersDeck]), new Set([deck]));
    assert.deepEqual(await ownedTaskIds(db(), student, [task.id, strangersTask.id]), new Set([task.id]));
    await assert.rejects(replaceDeckLinks(db(), student, exam.id, [strangersDeck]), { code: '23503' });
    await assert.rejects(replaceTaskLinks(db(), stranger, exam.id, [strangersTask.id]), { code: '23503' });
    await replaceDeckLinks(db(), student, exam.id, [deck, deck.toUpperCase()]);
    await replaceTaskLinks(db(), student, exam.id, [task.id, task.id.toUpperCase()]);

    const { exams } = await findExamPreparation(db(), student, [exam.id], {
      zone: 'UTC',
      since: at('2026-05-01T00:00:00Z'),
    });
    assert.deepEqual(
      exams.map((e) => ({ decks: e.decks, tasks: e.tasks })),
      [{ decks: [{ deck_id: deck }], tasks: [{ task_id: task.id, completed: false }] }],
    );
    assert.deepEqual(
      (await findExamPreparation(db(), stranger, [exam.id], { zone: 'UTC', since: at('2026-05-01T00:00:00Z') })).exams,
      [],
    );
  });

  it("reads the linked tasks' completion and the linked cards' memory, and replaces the links", async () => {
    const student = await newStudent();
    const exam = await newExam(student, '2026-06-01');
    const [deckA, deckB] = [await newDeck(student), await newDeck(student)];
    const reviewed = await newCard(student, deckA, at('2026-05-01T00:00:00Z'));
    await reviewCard(student, reviewed.id, at('2026-05-02T08:30:00.123Z'), at('2026-05-03T00:00:00Z'));
    await newCard(student, deckA, at('2026-05-01T00:00:00Z'));
    await newCard(student, deckB, at('2026-05-01T00:00:00Z'));
    const task = await newTask(student, at('2026-05-10T00:00:00Z'));
    await completeTask(student, task.id, at('2026-05-09T00:00:00Z'));
    await replaceDeckLinks(db(), student, exam.id, [deckA]);
    await replaceTaskLinks(db(), student, exam.id, [task.id]);

    const read = async () =>
      (await findExamPreparation(db(), student, [exam.id], { zone: 'UTC', since: at('2026-05-01T00:00:00Z') }))
        .exams[0]!;
    const facts = await read();
    assert.deepEqual(facts.tasks, [{ task_id: task.id, completed: true }]);
    assert.deepEqual(
      facts.cards.map((c) => c.last_reviewed_ms).sort(),
      [at('2026-05-02T08:30:00.123Z').getTime(), null].sort(),
    );
    await replaceDeckLinks(db(), student, exam.id, [deckB]);
    await replaceTaskLinks(db(), student, exam.id, []);
    const replaced = await read();
    assert.deepEqual([replaced.decks, replaced.tasks, replaced.cards.length], [[{ deck_id: deckB }], [], 1]);
  });

  it("counts study days in the student's zone: a review and a completion ten hours apart are one day in UTC, two in Almaty", async () => {
    const student = await newStudent();
    const exam = await newExam(student, '2026-06-01');
    const card = await newCard(student, await newDeck(student), at('2026-05-01T00:00:00Z'));
    await reviewCard(student, card.id, at('2026-05-04T20:00:00Z'), at('2026-05-10T00:00:00Z'));
    const task = await newTask(student, at('2026-05-10T00:00:00Z'));
    await completeTask(student, task.id, at('2026-05-04T10:00:00Z'));
    await reviewCard(student, card.id, at('2026-04-20T10:00:00Z'), at('2026-05-10T00:00:00Z')); // before the window

    const days = async (zone: string, since: string) =>
      Number((await findExamPreparation(db(), student, [exam.id], { zone, since: at(since) })).study_days);
    assert.equal(await days('UTC', '2026-05-01T00:00:00Z'), 1);
    assert.equal(await days('Asia/Almaty', '2026-05-01T00:00:00Z'), 2);
    assert.equal(await days('UTC', '2026-05-04T10:00:00.001Z'), 1);
    assert.equal(await days('UTC', '2026-05-04T20:00:00.001Z'), 0);
  });
  it('counts the distinct local days of many reviews across clock changes as their times in the zone say', async () => {
    const student = await newStudent();
    const exam = await newExam(student, '2026-06-01');
    const card = await newCard(student, await newDeck(student), at('2026-03-01T00:00:00Z'));
    // Reviews at pseudo-random instants over three weeks around the spring clock changes, several a day.
    let seed = 7;
    const random = () => (seed = (seed * 48_271) % 2_147_483_647) / 2_147_483_647;
    const times = Array.from(
      { length: 60 },
      () => new Date(Date.parse('2026-03-20T00:00:00Z') + Math.floor(random() * 21 * 86_400_000)),
    );
    for (const time of times) await reviewCard(student, card.id, time, at('2026-06-01T00:00:00Z'));
    const since = at('2026-03-25T00:00:00Z');
    for (const zone of [
      'UTC',
      'Europe/Berlin',
      'America/Santiago',
      'Asia/Kathmandu',
      'Pacific/Apia',
      'America/Havana',
    ]) {
      const expected = new Set(times.filter((time) => time >= since).map((time) => localDate(time, zone))).size;
      const counted = Number((await findExamPreparation(db(), student, [exam.id], { zone, since })).study_days);
      assert.equal(counted, expected, zone);
    }
  });
});
