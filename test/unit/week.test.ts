import assert from 'node:assert/strict';
import { localDate } from '../../domain/student-day.ts';
import { InvalidWeek, resolveWeek } from '../../domain/week.ts';

const now = new Date('2026-11-25T12:00:00Z'); // a Wednesday

describe('week: resolveWeek', () => {
  it('names an ISO week: Monday to Sunday, bounds at local midnight', () => {
    const w = resolveWeek({ week: '2026-W48' }, now, 'Asia/Almaty');
    assert.equal(w.week, '2026-W48');
    assert.deepEqual(w.dates, ['2026-11-23', '2026-11-24', '2026-11-25', '2026-11-26', '2026-11-27', '2026-11-28', '2026-11-29']);
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
