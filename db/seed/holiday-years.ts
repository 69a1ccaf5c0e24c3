// The years whose holidays can be computed. Kept apart from holidays.ts, which loads date-holidays (large) on demand:
// readers check a year here before they ask for it.

/**
 * date-holidays gives KZ and RU holidays it can stand behind for these years only: it has no Eid al-Adha after them
 * (its Hijri dates end), moves Orthodox Christmas off 7 January centuries on, and reads the years 0–99 as 1900–1999.
 */
export const HOLIDAY_YEARS = { first: 1900, last: 2199 } as const;

export function holidaysComputable(year: number): boolean {
  return Number.isInteger(year) && year >= HOLIDAY_YEARS.first && year <= HOLIDAY_YEARS.last;
}
