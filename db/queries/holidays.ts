import type { Insertable } from 'kysely';
import type { Db } from '../connect.ts';
import { executePrepared } from '../prepared-statements.ts';
import type { HolidaysTable } from '../schema.ts';

export async function isHolidayCountryEnabled(db: Db, countryCode: string): Promise<boolean> {
  const rows = await executePrepared(db, db.selectFrom('holiday_countries').select('country_code').where('country_code', '=', countryCode));
  return rows.length > 0;
}

export async function listHolidays(db: Db, countryCode: string, year: number) {
  return executePrepared(
    db,
    db
      .selectFrom('holidays')
      .select(['on_date', 'name', 'is_break', 'description'])
      .where('country_code', '=', countryCode)
      .where('on_date', '>=', `${year}-01-01`)
      .where('on_date', '<=', `${year}-12-31`)
      .orderBy('on_date')
      .orderBy('name'),
  );
}

/** Adds rows that are not stored yet; safe when two requests fill the same year at once. */
export async function insertMissingHolidays(db: Db, rows: Insertable<HolidaysTable>[]): Promise<void> {
  if (rows.length === 0) return;
  await db.insertInto('holidays').values(rows).onConflict((oc) => oc.doNothing()).execute();
}
