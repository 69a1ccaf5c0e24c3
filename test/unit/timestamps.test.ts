// timestamptz text from PostgreSQL read into Dates that keep their ISO form (db/timestamps.ts): the same instant as
// pg's own parser gives for every form, and the same ISO string as a Date of that instant.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import pg from 'pg';
import { parseTimestamp, StoredTimestamp } from '../../db/timestamps.ts';

const pgParse = pg.types.getTypeParser(1184) as (text: string) => Date;
const pad = (n: number, width: number) => String(n).padStart(width, '0');

/** What PostgreSQL sends for `time` in a UTC session, with `fractionDigits` digits of fraction (0: none). */
function utcText(time: number, micros: number, fractionDigits: number): string {
  const d = new Date(time);
  const base = `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)} ${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}`;
  const fraction = pad(d.getUTCMilliseconds() * 1000 + micros, 6).slice(0, fractionDigits);
  return `${base}${fractionDigits > 0 ? `.${fraction}` : ''}+00`;
}

describe('parseTimestamp', () => {
  it('reads every UTC text as pg does, and answers toISOString() as a Date of that instant', () => {
    const years = fc.integer({ min: Date.UTC(1000, 0, 1), max: Date.UTC(9999, 11, 31, 23, 59, 59, 999) });
    fc.assert(
      fc.property(
        years,
        fc.integer({ min: 0, max: 999 }),
        fc.integer({ min: 0, max: 6 }),
        (time, micros, fractionDigits) => {
          const text = utcText(time, micros, fractionDigits);
          const parsed = parseTimestamp(text);
          assert.ok(parsed instanceof StoredTimestamp, text);
          assert.equal(parsed.getTime(), pgParse(text).getTime(), text);
          assert.equal(parsed.toISOString(), new Date(parsed.getTime()).toISOString(), text);
          assert.equal(JSON.stringify(parsed), JSON.stringify(new Date(parsed.getTime())), text);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('leaves every other form to pg: another offset, early and BC years, infinity', () => {
    for (const text of [
      '2026-11-25 19:30:00.5+01:30',
      '2026-11-25 13:00:00-05',
      '0099-01-01 00:00:00+00',
      '0044-03-15 12:00:00+00 BC',
      'infinity',
      '-infinity',
    ]) {
      const parsed = parseTimestamp(text);
      assert.equal(parsed instanceof StoredTimestamp, false, text);
      assert.equal(String(parsed), String(pgParse(text)), text);
    }
  });

  it('says the new time once a setter changed it', () => {
    const parsed = parseTimestamp('2026-11-25 18:00:00.123456+00');
    assert.equal(parsed.toISOString(), '2026-11-25T18:00:00.123Z');
    parsed.setUTCHours(20);
    assert.equal(parsed.toISOString(), '2026-11-25T20:00:00.123Z');
  });
});
