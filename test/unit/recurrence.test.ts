import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { assertValidRecurrence, InvalidRecurrence, nextOccurrence, normaliseRecurrence } from '../../handlers/general/recurrence.ts';

const generalSpec = JSON.parse(readFileSync(new URL('../../generated/general/openapi.json', import.meta.url), 'utf8'));
const at = (iso: string) => new Date(iso);
const next = (rule: string, start: string, after: string, zone = 'UTC') => nextOccurrence(rule, at(start), at(after), zone)?.toISOString() ?? null;

describe('recurrence: nextOccurrence', () => {
  it('weekly: the same weekday and time a week later', () => {
    assert.equal(next('FREQ=WEEKLY', '2026-11-23T09:00:00Z', '2026-11-23T09:00:00Z'), '2026-11-30T09:00:00.000Z');
  });

  it('daily with an interval', () => {
    assert.equal(next('FREQ=DAILY;INTERVAL=3', '2026-11-23T09:00:00Z', '2026-11-23T09:00:00Z'), '2026-11-26T09:00:00.000Z');
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
    assert.equal(next('FREQ=WEEKLY', '2026-10-19T07:00:00Z', '2026-10-19T07:00:00Z', 'Europe/Berlin'), '2026-10-26T08:00:00.000Z');
  });

  it('keeps 09:00 Europe/Berlin across the start of summer time (UTC 08:00 → 07:00)', () => {
    assert.equal(next('FREQ=WEEKLY;BYDAY=MO', '2026-03-23T08:00:00Z', '2026-03-23T08:00:00Z', 'Europe/Berlin'), '2026-03-30T07:00:00.000Z');
  });

  it('BYDAY picks the weekday in the student zone, not in UTC', () => {
    // Monday 02:00 in Almaty (UTC+5) is Sunday 21:00Z; the next Monday is again Sunday in UTC.
    assert.equal(next('FREQ=WEEKLY;BYDAY=MO', '2026-11-22T21:00:00Z', '2026-11-22T21:00:00Z', 'Asia/Almaty'), '2026-11-29T21:00:00.000Z');
  });

  it('finds the next date after a late close of an earlier occurrence, not after today', () => {
    assert.equal(next('FREQ=WEEKLY', '2026-11-02T09:00:00Z', '2026-11-09T09:00:00Z'), '2026-11-16T09:00:00.000Z');
  });
});

describe('recurrence: assertValidRecurrence', () => {
  const valid = ['FREQ=WEEKLY', 'RRULE:FREQ=WEEKLY;BYDAY=MO,WE', 'FREQ=MONTHLY;BYMONTHDAY=-1', 'FREQ=DAILY;COUNT=10', 'FREQ=YEARLY;UNTIL=20301231T235959Z', 'freq=daily;interval=2'];
  for (const rule of valid) it(`accepts ${rule}`, () => assert.doesNotThrow(() => assertValidRecurrence(rule)));

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
    ["FREQ=YEARLY;BYMONTH=13", /BYMONTH takes numbers from 1 to 12/],
    ["FREQ=MONTHLY;BYMONTHDAY=0", /BYMONTHDAY takes numbers from ±1 to ±31/],
    ['FREQ=DAILY;FREQ=WEEKLY', /FREQ appears twice/],
  ];
  for (const [rule, message] of invalid) {
    it(`refuses ${JSON.stringify(rule)}`, () => assert.throws(() => assertValidRecurrence(rule), (e: unknown) => e instanceof InvalidRecurrence && message.test(e.message)));
  }

  it('drops an RRULE: prefix when storing', () => assert.equal(normaliseRecurrence(' RRULE:FREQ=DAILY '), 'FREQ=DAILY'));

  // The spec's pattern is the syntax, the handler the rest: the pattern must let through every upper-case rule the
  // handler accepts (else the spec refuses what the server would take) and stop the syntax errors before it.
  it("agrees with the spec's pattern", () => {
    const pattern = new RegExp((generalSpec.components.schemas.TaskRecurrence as { pattern: string }).pattern, 'u');
    for (const rule of valid.filter((r) => r === r.toUpperCase())) assert.match(rule, pattern);
    for (const rule of ['garbage', 'BYDAY=MO', 'FREQ=HOURLY', 'FREQ=DAILY;COUNT=0', 'FREQ=DAILY;UNTIL=tomorrow', 'FREQ=DAILY;TZID=Europe/Berlin', 'FREQ=DAILY;FREQ=WEEKLY']) {
      assert.doesNotMatch(rule, pattern);
    }
  });
});
