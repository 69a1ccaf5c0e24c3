// Public holidays and study breaks per country and year: reference data that partners poll and every week view shows.
// Kept in each process's memory once keepHolidaysInMemory was called (as the universities are), and read again after
// a change: the seed and a year computed on first use notify every process when they commit.
import type { Insertable } from 'kysely';
import type { Db } from '../connect.ts';
import { invalidatedCache, type InvalidatedCache } from '../invalidated-cache.ts';
import { notifyOnCommit, type Notifications } from '../notifications.ts';
import { executePrepared } from '../prepared-statements.ts';
import type { HolidaysTable } from '../schema.ts';

/** Notified when the enabled countries or their stored holidays change. */
export const HOLIDAYS_CHANNEL = 'holidays';
/** Two countries today, each a few stored years, and any year a partner asks for once: bounded all the same. */
const KEPT_YEARS = 500;

export type HolidayRow = Awaited<ReturnType<typeof storedYear>>[number];

const keptCountries = new WeakMap<Db, InvalidatedCache<ReadonlySet<string>>>();
const keptYears = new WeakMap<Db, InvalidatedCache<readonly HolidayRow[]>>();

/** Serves the holiday reads of `db` from memory from now on, by the cache's rules (db/invalidated-cache.ts). */
export function keepHolidaysInMemory(db: Db, notifications: Notifications): void {
  keptCountries.set(db, invalidatedCache(notifications, HOLIDAYS_CHANNEL, { maxEntries: 1 }));
  keptYears.set(db, invalidatedCache(notifications, HOLIDAYS_CHANNEL, { maxEntries: KEPT_YEARS }));
}

/** Tells every process, when `trx` commits, that holidays changed. */
export async function notifyHolidaysChanged(trx: Db): Promise<void> {
  await notifyOnCommit(trx, HOLIDAYS_CHANNEL, '');
}

export async function isHolidayCountryEnabled(db: Db, countryCode: string): Promise<boolean> {
  const kept = keptCountries.get(db);
  if (kept) return (await kept.get('all', () => enabledCountries(db)))!.has(countryCode);
  return (await enabledCountries(db)).has(countryCode);
}

async function enabledCountries(db: Db): Promise<ReadonlySet<string>> {
  const rows = await executePrepared(db, db.selectFrom('holiday_countries').select('country_code'));
  return new Set(rows.map((row) => row.country_code));
}

/**
 * The country's holidays of `year`, by date then name; empty when none are stored for it (a year not computed yet).
 * From memory, frozen, when kept: the same array until holidays change, so its JSON is made once
 * (server/http/frozen-json.ts). An empty year is never kept, so that a year stored later is seen at once.
 */
export async function listHolidays(db: Db, countryCode: string, year: number): Promise<readonly HolidayRow[]> {
  const kept = keptYears.get(db);
  if (!kept) return storedYear(db, countryCode, year);
  const load = async () => {
    const rows = await storedYear(db, countryCode, year);
    return rows.length > 0 ? Object.freeze(rows.map((row) => Object.freeze(row))) : undefined;
  };
  return (await kept.get(`${countryCode}/${year}`, load)) ?? [];
}

function storedYear(db: Db, countryCode: string, year: number) {
  return executePrepared(
    db,
    db
      .selectFrom('holidays')
      .select(['on_date', 'name', 'is_break', 'description'])
      .where('country_code', '=', countryCode)
      .where('on_date', '>=', `${yyyy(year)}-01-01`)
      .where('on_date', '<=', `${yyyy(year)}-12-31`)
      .orderBy('on_date')
      .orderBy('name'),
  );
}

/** Years below 1000 as four digits, as the dates they are compared with are written. */
function yyyy(year: number): string {
  return String(year).padStart(4, '0');
}

/** The country's holidays from `firstDate` to `lastDate` ('YYYY-MM-DD', inclusive), by date then name. */
export async function holidaysBetween(
  db: Db,
  countryCode: string,
  firstDate: string,
  lastDate: string,
): Promise<HolidayRow[]> {
  const [first, last] = [Number(firstDate.slice(0, 4)), Number(lastDate.slice(0, 4))];
  const rows: HolidayRow[] = [];
  for (let year = first; year <= last; year++) {
    for (const row of await listHolidays(db, countryCode, year))
      if (row.on_date >= firstDate && row.on_date <= lastDate) rows.push(row);
  }
  return rows;
}

/** True when any holiday of the country is stored for the year (a year with none stored is not computed yet). */
export async function holidayYearStored(db: Db, countryCode: string, year: number): Promise<boolean> {
  return (await listHolidays(db, countryCode, year)).length > 0;
}

/** Adds rows that are not stored yet; safe when two requests fill the same year at once. Every process is told. */
export async function insertMissingHolidays(db: Db, rows: Insertable<HolidaysTable>[]): Promise<void> {
  if (rows.length === 0) return;
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('holidays')
      .values(rows)
      .onConflict((oc) => oc.doNothing())
      .execute();
    await notifyHolidaysChanged(trx);
  });
}
