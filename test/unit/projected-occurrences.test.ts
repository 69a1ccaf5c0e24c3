// occurrencesBetween: the future occurrences of a series that the week view projects, bounded by the range.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { MAX_OPEN_SERIES } from '../../domain/bounds.ts';
import {
  CONVERSION_COST,
  MAX_PROJECTED,
  nextOccurrence,
  occurrencesBetween,
  RangeProjection,
  SERIES_COST,
  WEEK_PROJECTION_BUDGET,
  WEEK_SERIES_MAX,
} from '../../domain/recurrence.ts';
import { HANDED_COST, periodCost } from '../../domain/recurrence-search.ts';
import { arbitraryRule } from '../support/arbitrary-rules.ts';
import { withinEventLoopBudget } from '../support/event-loop-lag.ts';

const at = (iso: string) => new Date(iso);
const iso = (dates: Date[]) => dates.map((d) => d.toISOString());

describe('recurrence: occurrencesBetween', () => {
  it('keeps the wall-clock time across the autumn DST change (Europe/Berlin, 25 October 2026)', () => {
    // Daily at 09:00 local from Monday 19 October (CEST, UTC+2); the week ends before Monday 26 October (CET, UTC+1).
    const start = at('2026-10-19T07:00:00Z');
    const dates = occurrencesBetween(
      'FREQ=DAILY',
      start,
      start,
      at('2026-10-18T22:00:00Z'),
      at('2026-10-25T23:00:00Z'),
      'Europe/Berlin',
    );
    assert.deepEqual(iso(dates), [
      '2026-10-20T07:00:00.000Z',
      '2026-10-21T07:00:00.000Z',
      '2026-10-22T07:00:00.000Z',
      '2026-10-23T07:00:00.000Z',
      '2026-10-24T07:00:00.000Z',
      '2026-10-25T08:00:00.000Z',
    ]);
  });

  it("reads each zone's own wall-clock times when the same instants come back in another zone", () => {
    // The same series' instants and week, asked in three zones one after the other, then in the first again: the
    // wall-clock times a process keeps are each zone's (Monday 09:00 local is 08:00Z in Berlin, 14:00Z in New York).
    const project = (zone: string, start: Date) =>
      iso(
        occurrencesBetween(
          'FREQ=WEEKLY;BYDAY=MO',
          start,
          start,
          at('2026-11-15T12:00:00Z'),
          at('2026-11-24T12:00:00Z'),
          zone,
        ),
      );
    const berlin = at('2026-11-02T08:00:00Z');
    const newYork = at('2026-11-02T14:00:00Z');
    assert.deepEqual(project('Europe/Berlin', berlin), ['2026-11-16T08:00:00.000Z', '2026-11-23T08:00:00.000Z']);
    assert.deepEqual(project('America/New_York', newYork), ['2026-11-16T14:00:00.000Z', '2026-11-23T14:00:00.000Z']);
    // Berlin's start asked in New York: Monday 03:00 there.
    assert.deepEqual(project('America/New_York', berlin), ['2026-11-16T08:00:00.000Z', '2026-11-23T08:00:00.000Z']);
    assert.deepEqual(project('Asia/Almaty', berlin), ['2026-11-16T08:00:00.000Z', '2026-11-23T08:00:00.000Z']);
    assert.deepEqual(project('Europe/Berlin', berlin), ['2026-11-16T08:00:00.000Z', '2026-11-23T08:00:00.000Z']);
  });

  it('starts at the range, not at the series: a far week is one bounded search', () => {
    const start = at('2026-01-05T09:00:00Z'); // a Monday
    const dates = occurrencesBetween(
      'FREQ=WEEKLY;BYDAY=MO,TH',
      start,
      start,
      at('2030-06-03T00:00:00Z'),
      at('2030-06-10T00:00:00Z'),
      'UTC',
    );
    assert.deepEqual(iso(dates), ['2030-06-03T09:00:00.000Z', '2030-06-06T09:00:00.000Z']);
  });

  it('shows nothing before the open occurrence, nothing past COUNT or UNTIL, and at most MAX_PROJECTED', () => {
    const start = at('2026-11-02T09:00:00Z');
    const open = at('2026-11-04T09:00:00Z');
    assert.deepEqual(
      iso(occurrencesBetween('FREQ=DAILY', start, open, at('2026-11-02T00:00:00Z'), at('2026-11-06T00:00:00Z'), 'UTC')),
      ['2026-11-05T09:00:00.000Z'],
    );
    assert.deepEqual(
      iso(
        occurrencesBetween(
          'FREQ=DAILY;COUNT=4',
          start,
          open,
          at('2026-11-02T00:00:00Z'),
          at('2026-11-09T00:00:00Z'),
          'UTC',
        ),
      ),
      ['2026-11-05T09:00:00.000Z'],
    );
    assert.deepEqual(
      occurrencesBetween(
        'FREQ=DAILY;UNTIL=20261104',
        start,
        open,
        at('2026-11-02T00:00:00Z'),
        at('2026-11-09T00:00:00Z'),
        'UTC',
      ),
      [],
    );
    const hourly = occurrencesBetween(
      'FREQ=DAILY;BYHOUR=0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23',
      start,
      start,
      start,
      at('2027-01-01T00:00:00Z'),
      'UTC',
    );
    assert.equal(hourly.length, MAX_PROJECTED);
  });

  it('finds what closing occurrence after occurrence would create (nextOccurrence), in one walk', () => {
    const zone = fc.constantFrom('UTC', 'Europe/Berlin', 'Asia/Almaty', 'America/New_York', 'Australia/Lord_Howe');
    const instant = (min: string, max: string) =>
      fc.date({ min: new Date(min), max: new Date(max), noInvalidDate: true });
    fc.assert(
      fc.property(
        arbitraryRule,
        zone,
        instant('2026-01-01', '2026-12-31'),
        fc.integer({ min: 0, max: 400 }),
        fc.integer({ min: -10, max: 500 }),
        (rule, timeZone, seriesStart, afterDays, fromDays) => {
          const after = new Date(seriesStart.getTime() + afterDays * 86_400_000);
          const from = new Date(after.getTime() + fromDays * 86_400_000);
          const to = new Date(from.getTime() + 7 * 86_400_000);
          const expected: string[] = [];
          for (let previous = after; expected.length < MAX_PROJECTED;) {
            const next = nextOccurrence(rule, seriesStart, previous, timeZone);
            if (!next || next >= to) break;
            if (next >= from) expected.push(next.toISOString());
            previous = next;
          }
          assert.deepEqual(
            iso(occurrencesBetween(rule, seriesStart, after, from, to, timeZone)),
            expected,
            `${rule} in ${timeZone}`,
          );
        },
      ),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 200), seed: Number(process.env.PROPERTY_SEED ?? 20261127) },
    );
  });
});

describe('recurrence: what a projection costs (SearchBudget units)', () => {
  // The rule of the report: every hour of every day. Each projected occurrence used to restart a search from the
  // start of the year, so a week a year ahead cost 168 walks of up to a year of hourly dates per series.
  const HOURLY = `FREQ=YEARLY;BYDAY=MO,TU,WE,TH,FR,SA,SU;BYHOUR=${Array.from({ length: 24 }, (_, h) => h).join(',')}`;
  const start = at('2026-11-27T10:00:00Z');
  const week = (monday: string, zone = 'UTC', limit = Infinity) =>
    new RangeProjection(
      zone,
      at(`${monday}T00:00:00Z`),
      new Date(at(`${monday}T00:00:00Z`).getTime() + 7 * 86_400_000),
      limit,
    );

  // A period of the hourly rule (a year, every weekday) and the days a walk of one week hands back, its edges included.
  const YEAR_OF_WEEKDAYS = periodCost({ freq: 0, byweekday: [0, 1, 2, 3, 4, 5, 6] });
  const DAYS_HANDED = 7 + 3;

  it('projects a week of an hourly series in one walk of its days, however far the week lies', () => {
    for (const monday of ['2026-11-30', '2027-11-29', '2027-12-27', '2031-06-02']) {
      const projection = week(monday);
      assert.equal(projection.occurrences(HOURLY, start, start).length, 168, monday);
      // The series, at most two of the rule's periods (years) and the days of the week, not those from the year's
      // start (rrule hands back every date from where its walk starts), 168 times and the widened edges converted.
      const bound = SERIES_COST + 2 * YEAR_OF_WEEKDAYS + DAYS_HANDED * HANDED_COST + (168 + 6) * CONVERSION_COST;
      assert.ok(projection.budget.spent <= bound, `${monday}: spent ${projection.budget.spent} of ${bound}`);
    }
  });

  it('converts a wall-clock time once per week view: series due at the same times share the work', () => {
    const projection = week('2027-11-29', 'Europe/Berlin');
    projection.occurrences(HOURLY, start, start);
    const first = projection.budget.spent;
    projection.occurrences(HOURLY, start, start);
    assert.ok(
      projection.budget.spent - first <= SERIES_COST + 2 * YEAR_OF_WEEKDAYS + DAYS_HANDED * HANDED_COST,
      `the second series spent ${projection.budget.spent - first}`,
    );
  });

  it('bounds a week view of as many such series as it reads by one budget, and projects them in order', () => {
    const projection = week('2027-11-29', 'UTC', WEEK_PROJECTION_BUDGET);
    const shown = Array.from({ length: WEEK_SERIES_MAX }, () => projection.occurrences(HOURLY, start, start).length);
    assert.ok(projection.budget.spent <= WEEK_PROJECTION_BUDGET, `spent ${projection.budget.spent}`);
    const full = shown.filter((n) => n === 168).length;
    assert.ok(full >= 27 && full < WEEK_SERIES_MAX, `${full} series in full`);
    assert.deepEqual(shown.slice(0, full), Array(full).fill(168));
    assert.deepEqual(
      shown.slice(full + 1),
      Array(WEEK_SERIES_MAX - full - 1).fill(0),
      'nothing after the budget is spent',
    );
  });

  it('keeps the CPU of a week view within the event-loop budget whatever its rules: the units weigh what rrule does', async () => {
    // Rules that cost rrule far more per period than their days suggest: a COUNT series is walked from its first date
    // (three years back), and rrule rebuilds its year tables, week numbers included, for every period, a day's too.
    const threeYearsBack = at('2024-11-27T10:00:00Z');
    for (const rule of ['FREQ=DAILY;BYWEEKNO=1;COUNT=9999', 'FREQ=DAILY;BYMONTH=1;COUNT=9999', HOURLY]) {
      await withinEventLoopBudget(
        rule,
        async () => {
          const projection = week('2027-11-29', 'Europe/Berlin', WEEK_PROJECTION_BUDGET);
          for (let i = 0; i < WEEK_SERIES_MAX; i++)
            projection.occurrences(rule, new Date(threeYearsBack.getTime() + i * 60_000), threeYearsBack);
          assert.ok(projection.budget.spent <= WEEK_PROJECTION_BUDGET, `spent ${projection.budget.spent}`);
        },
        3,
      );
    }
  });

  it('projects every series of a student at the limit of open series, each a few times a week, with room in the budget', () => {
    const projection = week('2027-11-29', 'Europe/Berlin', WEEK_PROJECTION_BUDGET);
    const shown = Array.from(
      { length: MAX_OPEN_SERIES },
      (_, i) =>
        projection.occurrences(`FREQ=WEEKLY;BYDAY=MO,WE,FR;BYHOUR=${8 + (i % 12)};BYMINUTE=${i}`, start, start).length,
    );
    assert.deepEqual(shown, Array(MAX_OPEN_SERIES).fill(3));
    assert.ok(projection.budget.spent <= 0.6 * WEEK_PROJECTION_BUDGET, `spent ${projection.budget.spent}`);
  });

  for (const [what, rule] of [
    [
      'a COUNT series walked from a far start',
      `FREQ=DAILY;BYHOUR=${Array.from({ length: 24 }, (_, h) => h).join(',')};COUNT=9999`,
    ],
    [
      'a BYSETPOS rule over every hour of a year',
      `FREQ=YEARLY;BYHOUR=${Array.from({ length: 24 }, (_, h) => h).join(',')};BYSETPOS=1,-1`,
    ],
  ]) {
    it(`spends at most the budget on ${what}`, () => {
      const projection = week('2027-11-29', 'UTC', 5_000);
      projection.occurrences(rule!, start, start);
      assert.ok(projection.budget.spent <= 5_000, `spent ${projection.budget.spent}`);
    });
  }
});
