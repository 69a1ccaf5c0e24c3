import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import rrule from 'rrule';
import { EXHAUSTED, firstDateAfter, HORIZONS } from '../../domain/recurrence-search.ts';
import {
  assertValidRecurrence,
  InvalidRecurrence,
  nextOccurrence,
  normaliseRecurrence,
} from '../../domain/recurrence.ts';

const generalSpec = JSON.parse(readFileSync(new URL('../../generated/general/openapi.json', import.meta.url), 'utf8'));
const at = (iso: string) => new Date(iso);
const next = (rule: string, start: string, after: string, zone = 'UTC') =>
  nextOccurrence(rule, at(start), at(after), zone)?.toISOString() ?? null;

describe('recurrence: nextOccurrence', () => {
  it('weekly: the same weekday and time a week later', () => {
    assert.equal(next('FREQ=WEEKLY', '2026-11-23T09:00:00Z', '2026-11-23T09:00:00Z'), '2026-11-30T09:00:00.000Z');
  });

  it('daily with an interval', () => {
    assert.equal(
      next('FREQ=DAILY;INTERVAL=3', '2026-11-23T09:00:00Z', '2026-11-23T09:00:00Z'),
      '2026-11-26T09:00:00.000Z',
    );
  });

  it('BYDAY: Monday and Wednesday, in order, then the next week', () => {
    const rule = 'FREQ=WEEKLY;BYDAY=MO,WE';
    assert.equal(next(rule, '2026-11-23T09:00:00Z', '2026-11-23T09:00:00Z'), '2026-11-25T09:00:00.000Z');
    assert.equal(next(rule, '2026-11-23T09:00:00Z', '2026-11-25T09:00:00Z'), '2026-11-30T09:00:00.000Z');
  });

  it('COUNT counts from the series start: the third of three has no next', () => {
    const rule = 'FREQ=DAILY;COUNT=3';
    assert.equal(next(rule, '2026-11-23T09:00:00Z', '2026-11-24T09:00:00Z'), '2026-11-25T09:00:00.000Z');
    assert.equal(next(rule, '2026-11-23T09:00:00Z', '2026-11-25T09:00:00Z'), null);
  });

  it('UNTIL as a UTC time ends the series after it', () => {
    const rule = 'FREQ=DAILY;UNTIL=20261125T090000Z';
    assert.equal(next(rule, '2026-11-23T09:00:00Z', '2026-11-24T09:00:00Z'), '2026-11-25T09:00:00.000Z');
    assert.equal(next(rule, '2026-11-23T09:00:00Z', '2026-11-25T09:00:00Z'), null);
  });

  it('UNTIL as a date includes that whole local day', () => {
    const rule = 'FREQ=DAILY;UNTIL=20261125';
    assert.equal(next(rule, '2026-11-23T18:00:00Z', '2026-11-24T18:00:00Z', 'Asia/Almaty'), '2026-11-25T18:00:00.000Z');
    assert.equal(next(rule, '2026-11-23T18:00:00Z', '2026-11-25T18:00:00Z', 'Asia/Almaty'), null);
  });

  it('keeps 09:00 Europe/Berlin across the end of summer time (UTC 07:00 → 08:00)', () => {
    // 2026-10-19 09:00 CEST = 07:00Z; DST ends 2026-10-25; 2026-10-26 09:00 CET = 08:00Z.
    assert.equal(
      next('FREQ=WEEKLY', '2026-10-19T07:00:00Z', '2026-10-19T07:00:00Z', 'Europe/Berlin'),
      '2026-10-26T08:00:00.000Z',
    );
  });

  it('keeps 09:00 Europe/Berlin across the start of summer time (UTC 08:00 → 07:00)', () => {
    assert.equal(
      next('FREQ=WEEKLY;BYDAY=MO', '2026-03-23T08:00:00Z', '2026-03-23T08:00:00Z', 'Europe/Berlin'),
      '2026-03-30T07:00:00.000Z',
    );
  });

  it('BYDAY picks the weekday in the student zone, not in UTC', () => {
    // Monday 02:00 in Almaty (UTC+5) is Sunday 21:00Z; the next Monday is again Sunday in UTC.
    assert.equal(
      next('FREQ=WEEKLY;BYDAY=MO', '2026-11-22T21:00:00Z', '2026-11-22T21:00:00Z', 'Asia/Almaty'),
      '2026-11-29T21:00:00.000Z',
    );
  });

  it('finds the next date after a late close of an earlier occurrence, not after today', () => {
    assert.equal(next('FREQ=WEEKLY', '2026-11-02T09:00:00Z', '2026-11-09T09:00:00Z'), '2026-11-16T09:00:00.000Z');
  });
});

describe('recurrence: bounded search', () => {
  /** Rules with no date for centuries or ever: unbounded, rrule walked each for 10 to 30 s. */
  const HOSTILE = [
    'FREQ=DAILY;BYWEEKNO=53;BYMONTH=6',
    'FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30',
    'FREQ=DAILY;BYSETPOS=366;BYMONTH=2',
    'FREQ=WEEKLY;BYMONTH=2;BYMONTHDAY=31',
    'FREQ=MONTHLY;BYMONTH=4;BYMONTHDAY=31',
  ];
  const start = at('2026-11-23T09:00:00Z');
  // No clock here (these machines vary 3× from day to day): the walk's bound is checked structurally. A search
  // that ran out of its period budget answers EXHAUSTED, which only the budget produces; rrule's own walk would end
  // at the year 9999 with no date (null) after 10 to 30 s.
  const parsed = (rule: string) => ({ ...rrule.RRule.parseString(rule), dtstart: start });

  for (const rule of HOSTILE) {
    it(`stops walking ${rule} when its period budget is spent (EXHAUSTED), not at the year 9999`, () => {
      const options = parsed(rule);
      assert.equal(firstDateAfter(options, start, true, HORIZONS[options.freq!]!.periods), EXHAUSTED);
    });

    it(`refuses ${rule} as having no date within the horizon`, () => {
      assert.throws(
        () => assertValidRecurrence(rule, start, 'UTC'),
        (e: unknown) => e instanceof InvalidRecurrence && /no date in the (year|4 years) after due_at/.test(e.message),
      );
    });

    it(`ends a stored series of ${rule} (closed far from its start)`, () => {
      for (const [from, after] of [
        ['2026-11-23T09:00:00Z', '2026-11-23T09:00:00Z'],
        ['0001-01-01T09:00:00Z', '9999-06-01T09:00:00Z'],
      ]) {
        assert.equal(next(rule, from!, after!), null);
        assert.equal(next(`${rule};COUNT=5`, from!, after!), null);
      }
    });
  }

  it('accepts a rule whose first date is years away, within the horizon (29 February)', () => {
    assert.doesNotThrow(() =>
      assertValidRecurrence('FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29', at('2097-01-01T09:00:00Z'), 'UTC'),
    );
    assert.equal(
      next('FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29', '2097-01-01T09:00:00Z', '2097-01-01T09:00:00Z'),
      '2104-02-29T09:00:00.000Z',
    );
    assert.throws(
      () => assertValidRecurrence('FREQ=DAILY;BYMONTH=2;BYMONTHDAY=29', start, 'UTC'),
      /no date in the year after due_at/,
    );
  });

  it('refuses more than 24 times a day', () => {
    assert.throws(
      () => assertValidRecurrence('FREQ=DAILY;BYHOUR=8,9,10,11,12;BYMINUTE=0,10,20,30,40,50', start, 'UTC'),
      /more than 24 times a day/,
    );
    assert.doesNotThrow(() => assertValidRecurrence('FREQ=DAILY;BYHOUR=8,20;BYMINUTE=0,30', start, 'UTC'));
  });

  it('keeps a daily series going decades after its start, and its years 1–99 dates in those years', () => {
    assert.equal(
      next('FREQ=DAILY;INTERVAL=3', '2026-11-23T09:00:00Z', '2080-01-01T09:00:00Z'),
      '2080-01-02T09:00:00.000Z',
    );
    assert.equal(next('FREQ=WEEKLY', '0050-03-01T09:00:00Z', '0050-03-01T09:00:00Z'), '0050-03-08T09:00:00.000Z');
    // 9999-12-31 23:00 in New York is in the year 10000 (UTC): the series ends rather than leave the range.
    assert.equal(
      next('FREQ=DAILY', '9999-12-30T04:00:00Z', '9999-12-30T04:00:00Z', 'America/New_York'),
      '9999-12-31T04:00:00.000Z',
    );
    assert.equal(next('FREQ=DAILY', '9999-12-31T04:00:00Z', '9999-12-31T04:00:00Z', 'America/New_York'), null);
  });

  it('picks BYSETPOS among whole weeks of WKST, as rrule does, when the series started on another weekday', () => {
    // A Wednesday series: rrule's weeks run Monday to Sunday (WKST=MO), so the first of MO,WE,TH,FR in a week is its
    // Monday.
    assert.equal(
      next('FREQ=WEEKLY;BYDAY=MO,WE,TH,FR;BYSETPOS=1', '2024-03-20T14:00:00Z', '2026-04-29T10:41:44Z'),
      '2026-05-04T14:00:00.000Z',
    );
    assert.equal(
      next('FREQ=WEEKLY;BYDAY=MO,WE,FR;BYSETPOS=1,-1;WKST=WE', '2024-06-20T22:00:00Z', '2024-07-04T18:40:50Z'),
      '2024-07-08T22:00:00.000Z',
    );
  });

  it('finds what an unbounded rrule finds, for rules that have dates (restarting a series near `after` changes nothing)', () => {
    const { RRule } = rrule;
    const parts = fc.record(
      {
        FREQ: fc.constantFrom('DAILY', 'WEEKLY', 'MONTHLY', 'YEARLY'),
        INTERVAL: fc.integer({ min: 1, max: 5 }).map(String),
        BYDAY: fc.subarray(['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'], { minLength: 1 }).map((d) => d.join(',')),
        BYMONTHDAY: fc.subarray([1, 2, 15, 28, -1], { minLength: 1 }).map((d) => d.join(',')),
        BYHOUR: fc.subarray([0, 9, 23], { minLength: 1 }).map((d) => d.join(',')),
        BYSETPOS: fc.constantFrom('1', '-1'),
        COUNT: fc.integer({ min: 1, max: 60 }).map(String),
      },
      { requiredKeys: ['FREQ'] },
    );
    const instant = fc.date({ min: new Date('2020-01-01'), max: new Date('2035-12-31'), noInvalidDate: true });
    fc.assert(
      fc.property(parts, instant, instant, (record, seriesStart, after) => {
        const rule = Object.entries(record)
          .map(([k, v]) => `${k}=${v}`)
          .join(';');
        const options = RRule.parseString(rule);
        const expected = new RRule({ ...options, dtstart: seriesStart }).after(after, false);
        const actual = nextOccurrence(rule, seriesStart, after, 'UTC');
        if (actual === null && expected !== null) {
          // The documented bound: a COUNT series is walked 3 horizons from its start, another one horizon past `after`.
          const step =
            [365, 28, 7, 1][options.freq!]! * (options.interval ?? 1) * HORIZONS[options.freq!]!.periods * 86_400_000;
          const walkedTo = options.count
            ? seriesStart.getTime() + 3 * step
            : Math.max(after.getTime(), seriesStart.getTime()) + step;
          assert.ok(
            expected.getTime() > walkedTo,
            `${rule}: no date found, though ${expected.toISOString()} lies within the horizon`,
          );
        } else assert.equal(actual?.toISOString() ?? null, expected?.toISOString() ?? null, rule);
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 300), seed: Number(process.env.PROPERTY_SEED ?? 20261123) },
    );
  });
});

describe('recurrence: assertValidRecurrence', () => {
  const valid = [
    'FREQ=WEEKLY',
    'RRULE:FREQ=WEEKLY;BYDAY=MO,WE',
    'FREQ=MONTHLY;BYMONTHDAY=-1',
    'FREQ=DAILY;COUNT=10',
    'FREQ=YEARLY;UNTIL=20301231T235959Z',
    'freq=daily;interval=2',
  ];
  for (const rule of valid)
    it(`accepts ${rule}`, () =>
      assert.doesNotThrow(() => assertValidRecurrence(rule, at('2026-11-23T09:00:00Z'), 'UTC')));

  const invalid: [string, RegExp][] = [
    ['garbage', /NAME=VALUE/],
    ['BYDAY=MO', /FREQ is missing/],
    ['FREQ=HOURLY', /DAILY, WEEKLY, MONTHLY or YEARLY/],
    ['FREQ=FORTNIGHTLY', /DAILY, WEEKLY, MONTHLY or YEARLY/],
    ['FREQ=DAILY;COUNT=0', /COUNT must be a whole number/],
    ['FREQ=DAILY;COUNT=abc', /COUNT must be a whole number/],
    ['FREQ=DAILY;INTERVAL=-1', /INTERVAL must be a whole number/],
    ['FREQ=DAILY;COUNT=3;UNTIL=20261201', /COUNT and UNTIL cannot be combined/],
    ['FREQ=DAILY;UNTIL=tomorrow', /UNTIL must be a date/],
    ['FREQ=DAILY;TZID=Europe/Berlin', /TZID is not accepted/],
    ['DTSTART:20261101T090000Z\nRRULE:FREQ=DAILY', /NAME=VALUE|not accepted/],
    ['FREQ=WEEKLY;BYDAY=XX', /rrule cannot read it/],
    ['FREQ=YEARLY;BYMONTH=13', /BYMONTH takes numbers from 1 to 12/],
    ['FREQ=MONTHLY;BYMONTHDAY=0', /BYMONTHDAY takes numbers from ±1 to ±31/],
    ['FREQ=DAILY;FREQ=WEEKLY', /FREQ appears twice/],
  ];
  for (const [rule, message] of invalid) {
    it(`refuses ${JSON.stringify(rule)}`, () =>
      assert.throws(
        () => assertValidRecurrence(rule, at('2026-11-23T09:00:00Z'), 'UTC'),
        (e: unknown) => e instanceof InvalidRecurrence && message.test(e.message),
      ));
  }

  it('drops an RRULE: prefix when storing', () =>
    assert.equal(normaliseRecurrence(' RRULE:FREQ=DAILY '), 'FREQ=DAILY'));

  // The spec's pattern is the syntax, the handler the rest: the pattern must let through every upper-case rule the
  // handler accepts (else the spec refuses what the server would take) and stop the syntax errors before it.
  it("agrees with the spec's pattern", () => {
    const pattern = new RegExp((generalSpec.components.schemas.TaskRecurrence as { pattern: string }).pattern, 'u');
    for (const rule of valid.filter((r) => r === r.toUpperCase())) assert.match(rule, pattern);
    for (const rule of [
      'garbage',
      'BYDAY=MO',
      'FREQ=HOURLY',
      'FREQ=DAILY;COUNT=0',
      'FREQ=DAILY;UNTIL=tomorrow',
      'FREQ=DAILY;TZID=Europe/Berlin',
      'FREQ=DAILY;FREQ=WEEKLY',
    ]) {
      assert.doesNotMatch(rule, pattern);
    }
  });
});
