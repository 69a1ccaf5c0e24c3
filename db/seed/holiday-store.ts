// Stores computed holidays: the one place that writes holiday_countries and holidays.
import type { Db } from '../connect.ts';
import { notifyHolidaysChanged } from '../queries/holidays.ts';

/**
 * Enables `countryCode` and replaces its holidays of `years` in one transaction, so running it again
 * (or with newer date-holidays data) leaves exactly the computed rows. Returns the number of rows stored.
 */
export async function storeHolidays(db: Db, countryCode: string, years: number[]): Promise<number> {
  const code = countryCode.toUpperCase();
  years = [...new Set(years)];
  const { computeHolidays } = await import('./holidays.ts');
  const rows = years.flatMap((year) => computeHolidays(code, year)); // validates before anything is written
  return db.transaction().execute(async (trx) => {
    await trx
      .insertInto('holiday_countries')
      .values({ country_code: code })
      .onConflict((oc) => oc.column('country_code').doNothing())
      .execute();
    for (const year of years) {
      await trx
        .deleteFrom('holidays')
        .where('country_code', '=', code)
        .where('on_date', '>=', `${year}-01-01`)
        .where('on_date', '<=', `${year}-12-31`)
        .execute();
    }
    if (rows.length > 0) await trx.insertInto('holidays').values(rows).execute();
    // Processes keep holidays in memory: they are told once this commits.
    await notifyHolidaysChanged(trx);
    return rows.length;
  });
}
