// occurrencesBetween: the future occurrences of a series that the week view projects, bounded by the range.
import assert from 'node:assert/strict';
import { MAX_PROJECTED, occurrencesBetween } from '../../domain/recurrence.ts';

const at = (iso: string) => new Date(iso);
const iso = (dates: Date[]) => dates.map((d) => d.toISOString());

describe('recurrence: occurrencesBetween', () => {
  it('keeps the wall-clock time across the autumn DST change (Europe/Berlin, 25 October 2026)', () => {
    // Daily at 09:00 local from Monday 19 October (CEST, UTC+2); the week ends before Monday 26 October (CET, UTC+1).
    const start = at('2026-10-19T07:00:00Z');
    const dates = occurrencesBetween('FREQ=DAILY', start, start, at('2026-10-18T22:00:00Z'), at('2026-10-25T23:00:00Z'), 'Europe/Berlin');
    assert.deepEqual(iso(dates), [
      '2026-10-20T07:00:00.000Z',
      '2026-10-21T07:00:00.000Z',
      '2026-10-22T07:00:00.000Z',
      '2026-10-23T07:00:00.000Z',
      '2026-10-24T07:00:00.000Z',
      '2026-10-25T08:00:00.000Z',
    ]);
  });

  it('starts at the range, not at the series: a far week is one bounded search', () => {
    const start = at('2026-01-05T09:00:00Z'); // a Monday
    const dates = occurrencesBetween('FREQ=WEEKLY;BYDAY=MO,TH', start, start, at('2030-06-03T00:00:00Z'), at('2030-06-10T00:00:00Z'), 'UTC');
    assert.deepEqual(iso(dates), ['2030-06-03T09:00:00.000Z', '2030-06-06T09:00:00.000Z']);
  });

  it('shows nothing before the open occurrence, nothing past COUNT or UNTIL, and at most MAX_PROJECTED', () => {
    const start = at('2026-11-02T09:00:00Z');
    const open = at('2026-11-04T09:00:00Z');
    assert.deepEqual(iso(occurrencesBetween('FREQ=DAILY', start, open, at('2026-11-02T00:00:00Z'), at('2026-11-06T00:00:00Z'), 'UTC')), ['2026-11-05T09:00:00.000Z']);
    assert.deepEqual(iso(occurrencesBetween('FREQ=DAILY;COUNT=4', start, open, at('2026-11-02T00:00:00Z'), at('2026-11-09T00:00:00Z'), 'UTC')), ['2026-11-05T09:00:00.000Z']);
    assert.deepEqual(occurrencesBetween('FREQ=DAILY;UNTIL=20261104', start, open, at('2026-11-02T00:00:00Z'), at('2026-11-09T00:00:00Z'), 'UTC'), []);
    const hourly = occurrencesBetween('FREQ=DAILY;BYHOUR=0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23', start, start, start, at('2027-01-01T00:00:00Z'), 'UTC');
    assert.equal(hourly.length, MAX_PROJECTED);
  });
});
