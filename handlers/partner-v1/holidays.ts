import {
  insertMissingHolidays,
  isHolidayCountryEnabled,
  listHolidays as storedHolidays,
  type HolidayRow,
} from '../../db/queries/holidays.ts';
import { problems } from '../../server/http/problems.ts';
import type { PartnerHandlers } from './types.ts';

export const listHolidays: PartnerHandlers['listHolidays'] = async ({ path, query }, { db, now }) => {
  const country = path.country_code.toUpperCase();
  if (!(await isHolidayCountryEnabled(db, country))) {
    throw problems.notFound(`Holidays of ${country} are not available; KZ and RU are, other countries on request.`);
  }
  const year = query.year ?? now().getUTCFullYear();
  let rows = await storedHolidays(db, country, year);
  if (rows.length === 0) {
    // The seed stores a few years around today; any other year of an enabled country is computed once, on first use.
    const { computeHolidays } = await import('../../db/seed/holidays.ts');
    await insertMissingHolidays(db, computeHolidays(country, year));
    rows = await storedHolidays(db, country, year);
  }
  // Frozen when kept in memory (db/queries/holidays.ts): sent as bytes serialized once (server/http/frozen-json.ts).
  return { status: 200, body: rows as HolidayRow[] };
};
