// holidays enable: store a country's public holidays for a range of years.
import { storeHolidays } from '../../db/seed/holiday-store.ts';
import { HOLIDAY_YEARS } from '../../db/seed/holiday-years.ts';
import { isHolidayCountrySupported } from '../../db/seed/holidays.ts';
import { parse, print, UsageError, withDb } from './shared.ts';

/** The years computeHolidays accepts. */
const { first: FIRST_YEAR, last: LAST_YEAR } = HOLIDAY_YEARS;
/** A typo like 2026-2206 should not silently store two centuries of rows. */
const MAX_YEARS = 50;

export async function enable(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, { years: { type: 'string' } }, ['COUNTRY (two letters, e.g. DE)']);
  const country = positionals[0]!; // parse guarantees the one positional
  if (!isHolidayCountrySupported(country)) {
    throw new UsageError(
      `unsupported country ${JSON.stringify(country)}; expected a two-letter code known to date-holidays, e.g. DE`,
    );
  }
  const years = values.years === undefined ? defaultYears(new Date()) : parseYears(values.years);

  const stored = await withDb((db) => storeHolidays(db, country, years));
  const span = years.length === 1 ? `${years[0]}` : `${years[0]}–${years.at(-1)}`;
  print(`stored ${stored} holidays of ${country.toUpperCase()} for ${span}`);
}

/** Last year to two years ahead: the window `seed` stores for KZ and RU. */
function defaultYears(now: Date): number[] {
  const year = now.getUTCFullYear();
  return range(year - 1, year + 2);
}

function parseYears(raw: string): number[] {
  const match = /^(\d{4})(?:-(\d{4}))?$/.exec(raw);
  if (!match) throw new UsageError(`--years must be YYYY or YYYY-YYYY, got ${JSON.stringify(raw)}`);
  const from = Number(match[1]);
  const to = Number(match[2] ?? match[1]);
  if (from < FIRST_YEAR || to > LAST_YEAR)
    throw new UsageError(`--years must lie within ${FIRST_YEAR}–${LAST_YEAR}, got ${raw}`);
  if (from > to) throw new UsageError(`--years must run forwards (earlier year first), got ${raw}`);
  if (to - from + 1 > MAX_YEARS)
    throw new UsageError(`--years may span at most ${MAX_YEARS} years, got ${to - from + 1}`);
  return range(from, to);
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}
