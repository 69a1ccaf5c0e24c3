// Vectors are what date-holidays 3.37 really returns for Kazakhstan and Russia; where that differs from the
// official calendar, the test says so.
import assert from 'node:assert/strict';
import { computeHolidays, isHolidayCountrySupported, type HolidaySeed } from '../../db/seed/holidays.ts';

const on = (rows: HolidaySeed[], date: string) => rows.filter((r) => r.on_date === date);
const only = (rows: HolidaySeed[], date: string) => {
  const found = on(rows, date);
  assert.equal(found.length, 1, `exactly one holiday on ${date}, got ${JSON.stringify(found)}`);
  return found[0]!;
};

describe('computeHolidays', () => {
  describe('Kazakhstan 2026', () => {
    const kz = computeHolidays('KZ', 2026);

    it('has Nauryz on 21–23 March as a break, named in Kazakh and English', () => {
      for (const date of ['2026-03-21', '2026-03-22', '2026-03-23']) {
        const row = only(kz, date);
        assert.equal(row.name, 'Наурыз мейрамы / Nauryz');
        assert.equal(row.is_break, true);
        assert.equal(row.country_code, 'KZ');
        assert.match(row.description, /^Spring equinox festival.*break\.$/);
      }
    });

    // The data moves Saturday the 21st to Monday the 23rd, already Nauryz, so it yields 21–24 March; the official
    // 2026 calendar has 23–25 March off. We keep what the data says and one row on the 23rd.
    it('keeps the substitute day off of 24 March, and only one row on 23 March where the data has two', () => {
      const row = only(kz, '2026-03-24');
      assert.equal(row.name, 'Наурыз мейрамы / Nauryz');
      assert.equal(row.is_break, true);
      assert.equal(row.description, 'Substitute day off for Nauryz; part of a four-day break.');
      assert.doesNotMatch(only(kz, '2026-03-23').description, /Substitute/);
    });

    it('has Independence Day on 16 December, a one-day holiday', () => {
      const row = only(kz, '2026-12-16');
      assert.equal(row.name, 'Тәуелсіздік күні / Independence Day');
      assert.equal(row.is_break, false);
      assert.match(row.description, /; a day off\.$/);
    });

    it('flags Monday 9 March as the substitute for Women’s Day on Sunday the 8th; two days are not a break', () => {
      assert.equal(only(kz, '2026-03-08').is_break, false);
      const row = only(kz, '2026-03-09');
      assert.equal(row.name, "Халықаралық әйелдер күні / International Women's Day");
      assert.equal(row.description, "Substitute day off for International Women's Day.");
      assert.equal(row.is_break, false);
    });

    it('uses the calendar date in Kazakhstan for lunar holidays, not the UTC day of the start instant', () => {
      assert.equal(only(kz, '2026-05-27').name, 'Құрбан айт / Eid al-Adha');
      assert.equal(on(kz, '2026-05-26').length, 0);
    });
  });

  describe('Russia 2026', () => {
    const ru = computeHolidays('RU', 2026);

    it('has one row for each day of 1–8 January, all part of the New Year break', () => {
      const january = ru.filter((r) => r.on_date <= '2026-01-08');
      assert.deepEqual(
        january.map((r) => r.on_date),
        ['01', '02', '03', '04', '05', '06', '07', '08'].map((d) => `2026-01-${d}`),
      );
      assert.ok(january.every((r) => r.is_break));
      assert.equal(only(ru, '2026-01-04').name, 'Новогодние каникулы / New Year Holiday');
      assert.equal(only(ru, '2026-01-07').name, 'Рождество Христово / Christmas Day');
      assert.equal(only(ru, '2026-01-01').description, 'New Year celebration; part of an eight-day break.');
    });

    it('has the one-day holidays, none of them a break', () => {
      const expected = {
        '2026-02-23': 'День защитника Отечества / Defender of the Fatherland Day',
        '2026-03-08': "Международный женский день / International Women's Day",
        '2026-05-01': 'День весны и труда / Spring and Labour Day',
        '2026-05-09': 'День Победы / Victory Day',
        '2026-06-12': 'День России / Russia Day',
        '2026-11-04': 'День народного единства / Unity Day',
      };
      for (const [date, name] of Object.entries(expected)) {
        const row = only(ru, date);
        assert.equal(row.name, name);
        assert.equal(row.is_break, false, date);
      }
    });

    it('recognises 9 March as a substitute day although the Russian data does not flag it', () => {
      assert.equal(only(ru, '2026-03-09').description, "Substitute day off for International Women's Day.");
    });

    it('has no other days off', () => {
      assert.equal(ru.length, 8 + 7);
    });
  });

  it('gives every KZ and RU row a Cyrillic and a Latin name part, a date of its year and a unique (date, name)', () => {
    for (const country of ['KZ', 'RU']) {
      for (const year of [2025, 2026, 2027, 2028]) {
        const rows = computeHolidays(country, year);
        assert.ok(rows.length >= 10, `${country} ${year}`);
        for (const row of rows) {
          assert.match(row.name, /^[^/]*\p{Script=Cyrillic}[^/]* \/ [^/]*[A-Za-z]/u);
          assert.match(row.on_date, new RegExp(`^${year}-\\d\\d-\\d\\d$`));
          assert.ok(row.description.length > 10);
        }
        assert.equal(
          new Set(rows.map((r) => `${r.on_date}|${r.name}`)).size,
          rows.length,
          `${country} ${year} duplicates`,
        );
      }
    }
  });

  it('falls back to the first official language and a generic description for other countries', () => {
    const de = computeHolidays('DE', 2026);
    assert.equal(only(de, '2026-10-03').name, 'Tag der Deutschen Einheit / National Holiday');
    assert.equal(only(de, '2026-10-03').description, 'Public holiday in Germany; a day off.');
    // United States: the local (en-us) name is the English name, so it appears once.
    assert.equal(only(computeHolidays('US', 2026), '2026-01-01').name, "New Year's Day");
  });

  it('accepts lower-case codes and rejects unknown or malformed ones', () => {
    assert.deepEqual(computeHolidays('kz', 2026), computeHolidays('KZ', 2026));
    assert.throws(() => computeHolidays('XX', 2026), RangeError);
    assert.throws(() => computeHolidays('KAZ', 2026), RangeError);
    assert.throws(() => computeHolidays('KZ', 2026.5), RangeError);
  });
});

describe('isHolidayCountrySupported', () => {
  it('knows KZ and RU in any case, and not XX or malformed codes', () => {
    assert.equal(isHolidayCountrySupported('KZ'), true);
    assert.equal(isHolidayCountrySupported('ru'), true);
    assert.equal(isHolidayCountrySupported('XX'), false);
    assert.equal(isHolidayCountrySupported('RUS'), false);
    assert.equal(isHolidayCountrySupported(''), false);
  });
});
