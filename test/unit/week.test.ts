import assert from 'node:assert/strict';
import { localDate, studentDay } from '../../domain/student-day.ts';
import { dayOfWeek, InvalidWeek, resolveWeek } from '../../domain/week.ts';

const now = new Date('2026-11-25T12:00:00Z'); // a Wednesday

describe('week: resolveWeek', () => {
  it('names an ISO week: Monday to Sunday, bounds at local midnight', () => {
    const w = resolveWeek({ week: '2026-W48' }, now, 'Asia/Almaty');
    assert.equal(w.week, '2026-W48');
    assert.deepEqual(w.dates, [
      '2026-11-23',
      '2026-11-24',
      '2026-11-25',
      '2026-11-26',
      '2026-11-27',
      '2026-11-28',
      '2026-11-29',
    ]);
    assert.equal(w.starts_at.toISOString(), '2026-11-22T19:00:00.000Z'); // 00:00 in UTC+5
    assert.equal(w.ends_at.toISOString(), '2026-11-29T19:00:00.000Z');
  });

  it('finds the week containing a start date, and the current week by default', () => {
    assert.equal(resolveWeek({ start: '2026-11-29' }, now, 'UTC').week, '2026-W48');
    assert.equal(resolveWeek({ start: '2026-11-30' }, now, 'UTC').week, '2026-W49');
    assert.equal(resolveWeek({}, now, 'UTC').week, '2026-W48');
  });

  it('takes "now" in the student zone: Sunday evening in UTC is already Monday in Almaty', () => {
    const sunday = new Date('2026-11-29T20:00:00Z');
    assert.equal(resolveWeek({}, sunday, 'UTC').week, '2026-W48');
    assert.equal(resolveWeek({}, sunday, 'Asia/Almaty').week, '2026-W49');
  });

  it('handles weeks across a year end and week 53', () => {
    assert.deepEqual(resolveWeek({ week: '2026-W53' }, now, 'UTC').dates.slice(0, 1), ['2026-12-28']);
    assert.equal(resolveWeek({ start: '2027-01-01' }, now, 'UTC').week, '2026-W53');
    assert.deepEqual(resolveWeek({ week: '2027-W01' }, now, 'UTC').dates[0], '2027-01-04');
  });

  it('spans 7 days of 23 and 25 hours across a DST change', () => {
    const w = resolveWeek({ week: '2026-W13' }, now, 'Europe/Berlin'); // summer time starts Sunday 29 March
    assert.equal(w.ends_at.getTime() - w.starts_at.getTime(), 7 * 86_400_000 - 3_600_000);
  });

  for (const week of ['2027-W53', '2026-W00', '2026-W54']) {
    it(`refuses ${week}`, () => assert.throws(() => resolveWeek({ week }, now, 'UTC'), InvalidWeek));
  }
});

describe('week: localDate', () => {
  it('is the date in the zone, not in UTC', () => {
    assert.equal(localDate(new Date('2026-11-23T20:00:00Z'), 'Asia/Almaty'), '2026-11-24');
    assert.equal(localDate(new Date('2026-11-23T20:00:00Z'), 'UTC'), '2026-11-23');
  });
});

describe('week: dayOfWeek', () => {
  // Weeks with a DST change (Berlin, Santiago at midnight), a half-hour zone and a zone far east.
  const cases: Array<[string, string]> = [
    ['2026-W13', 'Europe/Berlin'],
    ['2026-W43', 'Europe/Berlin'],
    ['2026-W36', 'America/Santiago'],
    ['2026-W48', 'Asia/Kolkata'],
    ['2026-W48', 'Pacific/Kiritimati'],
  ];
  for (const [name, zone] of cases) {
    it(`puts every instant of ${name} in ${zone} on the day its local date names, and nothing outside the week`, () => {
      const week = resolveWeek({ week: name }, now, zone);
      const from = week.starts_at.getTime() - 3 * 3_600_000;
      const to = week.ends_at.getTime() + 3 * 3_600_000;
      let inside = 0;
      for (let t = from; t < to; t += 7 * 60_000 + 13_000) {
        const instant = new Date(t);
        const day = dayOfWeek(week, instant);
        const date = localDate(instant, zone);
        assert.equal(
          day === undefined ? undefined : week.dates[day],
          week.dates.includes(date) ? date : undefined,
          instant.toISOString(),
        );
        if (day !== undefined) inside++;
      }
      assert.ok(inside > 1000);
    });
  }

  it('remembers a week without changing it: the current week until it ends, named weeks', () => {
    const a = resolveWeek({}, now, 'Asia/Almaty');
    assert.equal(resolveWeek({}, new Date(now.getTime() + 3_600_000), 'Asia/Almaty'), a);
    const next = resolveWeek({}, a.ends_at, 'Asia/Almaty');
    assert.notEqual(next, a);
    assert.equal(next.starts_at.getTime(), a.ends_at.getTime());
    assert.equal(resolveWeek({ week: '2026-W48' }, now, 'Asia/Almaty').week, '2026-W48');
    assert.throws(() => (a.dates as string[]).push('x'), TypeError);
  });
});

describe('student day where a midnight does not exist', () => {
  // Chile moves its clocks from 00:00 to 01:00 on 2026-09-06: that day starts at 01:00 (-03) and has 23 hours.
  it('ends the day at the next local midnight, so the first hour of the next day is the next day', () => {
    const day = studentDay(new Date('2026-09-06T15:00:00Z'), 'America/Santiago');
    assert.equal(day.today, '2026-09-06');
    assert.equal(day.start.toISOString(), '2026-09-06T04:00:00.000Z');
    assert.equal(day.end.toISOString(), '2026-09-07T03:00:00.000Z');
    assert.equal(localDate(new Date('2026-09-07T03:30:00Z'), 'America/Santiago'), '2026-09-07');
  });
});
