import assert from 'node:assert/strict';
import { DateTime } from 'luxon';
import { generalApp, type Student } from '../../support/general-app.ts';

type Api = Awaited<ReturnType<typeof generalApp>>['api'];
type Db = Awaited<ReturnType<typeof generalApp>>['db'];
type Day = {
  date: string;
  tasks: Array<{ title: string }>;
  exams: Array<{ subject: string }>;
  decks_due: Array<{ title: string; due_count: number }>;
  holidays: Array<{ name: string }>;
};

async function task(api: Api, student: Student, title: string, due_at: string) {
  return (await api.post('/api/tasks').set(student.headers).send({ title, due_at, course: 'Physics' }).expect(201))
    .body;
}

async function week(api: Api, student: Student, query: string) {
  const res = await api.get(`/api/schedule${query}`).set(student.headers).expect(200);
  const byDate = (date: string) => (res.body.days as Day[]).find((d) => d.date === date)!;
  return { body: res.body, byDate };
}

async function deckWithCards(db: Db, student: Student, title: string, dueTimes: Date[]) {
  const deck = await db
    .insertInto('flashcard_decks')
    .values({ user_id: student.id, title })
    .returning('id')
    .executeTakeFirstOrThrow();
  await db
    .insertInto('flashcard_cards')
    .values(
      dueTimes.map((next_due_at) => ({ deck_id: deck.id, user_id: student.id, front: 'q', back: 'a', next_due_at })),
    )
    .execute();
  return deck.id;
}

describe('getSchedule', () => {
  it("puts tasks on the day they are due in the student's zone: 20:00Z Monday is Tuesday in Almaty", async () => {
    const { api, newStudent } = await generalApp();
    const [almaty, other] = [await newStudent({ time_zone: 'Asia/Almaty' }), await newStudent()];
    await task(api, almaty, 'late monday in UTC', '2026-11-23T20:00:00Z');
    await task(api, almaty, 'monday evening', '2026-11-23T18:00:00Z');
    await task(api, almaty, 'sunday night before', '2026-11-22T18:59:00Z');
    await task(api, other, 'not mine', '2026-11-24T09:00:00Z');
    const { body, byDate } = await week(api, almaty, '?week=2026-W48');
    assert.equal(body.week, '2026-W48');
    assert.deepEqual([body.start_date, body.end_date, body.time_zone], ['2026-11-23', '2026-11-29', 'Asia/Almaty']);
    assert.deepEqual(
      body.days.map((d: Day) => d.date),
      ['2026-11-23', '2026-11-24', '2026-11-25', '2026-11-26', '2026-11-27', '2026-11-28', '2026-11-29'],
    );
    assert.deepEqual(
      byDate('2026-11-23').tasks.map((t) => t.title),
      ['monday evening'],
    );
    assert.deepEqual(
      byDate('2026-11-24').tasks.map((t) => t.title),
      ['late monday in UTC'],
    );
    assert.equal(body.days.flatMap((d: Day) => d.tasks).length, 2);
  });

  it('shows the week containing `start`, and the current week by default', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent({ time_zone: 'Asia/Almaty' });
    assert.equal((await week(api, alice, '?start=2026-11-29')).body.week, '2026-W48');
    assert.equal((await week(api, alice, '?start=2026-11-30')).body.week, '2026-W49');
    const now = DateTime.now().setZone('Asia/Almaty');
    const current = (await week(api, alice, '')).body;
    assert.equal(current.start_date, now.startOf('week').toISODate());
    assert.equal(current.week, now.toFormat("kkkk-'W'WW"));
  });

  it("shows the public holidays of the student's country: KZ Independence Day on 16 December 2026", async () => {
    const { api, newStudent } = await generalApp();
    const [kz, nowhere] = [await newStudent({ time_zone: 'Asia/Almaty', country_code: 'kz' }), await newStudent()];
    const { body, byDate } = await week(api, kz, '?start=2026-12-16');
    assert.equal(body.country_code, 'kz');
    assert.deepEqual(
      byDate('2026-12-16').holidays.map((h) => h.name),
      ['Тәуелсіздік күні / Independence Day'],
    );
    assert.equal(body.days.flatMap((d: Day) => d.holidays).length, 1);
    const without = await week(api, nowhere, '?start=2026-12-16');
    assert.equal(without.body.country_code, null);
    assert.deepEqual(
      without.body.days.flatMap((d: Day) => d.holidays),
      [],
    );
  });

  it('computes the holidays of a year the seed does not hold, on first use', async () => {
    const { api, newStudent } = await generalApp();
    const ru = await newStudent({ time_zone: 'Europe/Moscow', country_code: 'ru' });
    const { byDate } = await week(api, ru, '?start=2031-06-12');
    assert.match(byDate('2031-06-12').holidays[0]!.name, /Russia Day/);
  });

  // date-holidays holds KZ and RU data for 1900–2199 only: outside, the week is served, with no holidays (never a 500).
  const FAR_WEEKS: Array<[string, string, string[]]> = [
    ['?week=9999-W51', '9999-12-20', []],
    ['?start=9999-12-26', '9999-12-20', []],
    ['?week=2200-W01', '2199-12-30', ['2199-12-30', '2199-12-31']],
    ['?week=1899-W52', '1899-12-25', []],
    ['?week=5000-W10', '5000-03-03', []],
  ];
  for (const country of ['kz', 'ru']) {
    for (const [query, monday, withHolidays] of FAR_WEEKS) {
      it(`serves ${query} to a ${country.toUpperCase()} student, holidays only where the holiday data has the year`, async () => {
        const { api, newStudent } = await generalApp();
        const student = await newStudent({ time_zone: 'UTC', country_code: country });
        const { body } = await week(api, student, query);
        assert.equal(body.start_date, monday);
        const holidayDates = body.days
          .filter((d: Day) => d.holidays.length > 0)
          .map((d: Day & { date: string }) => d.date);
        assert.ok(
          holidayDates.every((date: string) => withHolidays.includes(date)),
          `holidays on ${holidayDates.join(', ')}`,
        );
      });
    }
  }

  it('lists exams on their date', async () => {
    const { api, db, newStudent } = await generalApp();
    const [alice, bob] = [await newStudent({ time_zone: 'Asia/Almaty' }), await newStudent()];
    await db
      .insertInto('exams')
      .values({ user_id: alice.id, subject: 'Linear Algebra', exam_date: '2026-11-27' })
      .execute();
    await db.insertInto('exams').values({ user_id: bob.id, subject: 'Not mine', exam_date: '2026-11-27' }).execute();
    const { byDate } = await week(api, alice, '?week=2026-W48');
    assert.deepEqual(
      byDate('2026-11-27').exams.map((e) => e.subject),
      ['Linear Algebra'],
    );
  });

  it('counts cards due per deck and day; overdue cards count on today, and not in past weeks', async () => {
    const { api, db, newStudent } = await generalApp();
    const alice = await newStudent({ time_zone: 'Asia/Almaty' });
    const now = DateTime.now().setZone('Asia/Almaty');
    const today = now.toISODate()!;
    const nextWeekMonday = now.startOf('week').plus({ weeks: 1 });
    await deckWithCards(db, alice, 'Eigenvalues', [
      now.minus({ days: 10 }).toJSDate(), // overdue
      now.minus({ days: 1 }).toJSDate(), // overdue
      now.toJSDate(), // due today
      nextWeekMonday.plus({ hours: 10 }).toJSDate(),
    ]);
    await deckWithCards(db, alice, 'Bases', [nextWeekMonday.plus({ hours: 11 }).toJSDate()]);

    const current = await week(api, alice, '');
    assert.deepEqual(
      current.byDate(today).decks_due.map((d) => [d.title, d.due_count]),
      [['Eigenvalues', 3]],
    );
    assert.equal(current.body.days.flatMap((d: Day) => d.decks_due).length, 1);

    const next = await week(api, alice, `?start=${nextWeekMonday.toISODate()}`);
    assert.deepEqual(
      next.byDate(nextWeekMonday.toISODate()!).decks_due.map((d) => [d.title, d.due_count]),
      [
        ['Bases', 1],
        ['Eigenvalues', 1],
      ],
    );

    const past = await week(api, alice, `?start=${now.minus({ weeks: 2 }).toISODate()}`);
    assert.deepEqual(
      past.body.days.flatMap((d: Day) => d.decks_due),
      [],
    );
  });

  it('answers 400 for week and start together, an impossible week or date', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const both = await api.get('/api/schedule?week=2026-W48&start=2026-11-25').set(alice.headers).expect(400);
    assert.equal(both.body.code, 'invalid_request');
    const week53 = await api.get('/api/schedule?week=2027-W53').set(alice.headers).expect(400);
    assert.equal(week53.body.errors[0].path, 'query.week');
    await api.get('/api/schedule?week=2026-48').set(alice.headers).expect(400);
    await api.get('/api/schedule?start=2026-02-30').set(alice.headers).expect(400);
  });

  it('answers 401 without credentials and 403 without schedule:read', async () => {
    const { api, newStudent } = await generalApp();
    await api.get('/api/schedule').expect(401);
    const reader = await newStudent({ scopes: ['tasks:read'] });
    const res = await api.get('/api/schedule').set(reader.headers).expect(403);
    assert.equal(res.body.code, 'insufficient_scope');
    await api.post('/api/schedule').set(reader.headers).expect(405);
  });
});
