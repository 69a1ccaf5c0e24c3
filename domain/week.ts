// Which week the schedule shows, in the student's time zone. Pure: no I/O. Weeks are ISO 8601 weeks (Monday to
// Sunday, week 1 holds the year's first Thursday); their bounds are local midnights turned into UTC instants.
import { DateTime } from 'luxon';
import { FIRST_INSTANT, LAST_INSTANT } from './instants.ts';

export interface Week {
  /** The ISO week, `2026-W48`. */
  week: string;
  /** Monday to Sunday, `YYYY-MM-DD`. */
  dates: string[];
  /** Local midnight starting the Monday, and the one after the Sunday (exclusive), as instants. */
  starts_at: Date;
  ends_at: Date;
}

export class InvalidWeek extends Error {}

/** The week named by `week` (`YYYY-Www`), else the one containing `start` (`YYYY-MM-DD`), else the one containing `now`. */
export function resolveWeek(choice: { week?: string; start?: string }, now: Date, timeZone: string): Week {
  let monday: DateTime;
  if (choice.week !== undefined) {
    const match = /^(\d{4})-W(\d{2})$/.exec(choice.week);
    const parsed = match ? DateTime.fromObject({ weekYear: Number(match[1]), weekNumber: Number(match[2]), weekday: 1 }, { zone: timeZone }) : undefined;
    if (!parsed?.isValid || parsed.weekNumber !== Number(match![2])) throw new InvalidWeek(`${choice.week} is not an ISO week (YYYY-Www, weeks 01 to 52 or 53)`);
    monday = parsed;
  } else {
    const day = choice.start !== undefined ? DateTime.fromISO(choice.start, { zone: timeZone }) : DateTime.fromJSDate(now, { zone: timeZone });
    if (!day.isValid) throw new InvalidWeek(`${choice.start} is not a date`);
    monday = day.startOf('week');
  }
  monday = monday.startOf('day');
  const starts_at = monday.toJSDate();
  const ends_at = monday.plus({ weeks: 1 }).toJSDate();
  // The service keeps instants of the years 0001–9999 (UTC): 9999-W52 ends in the year 10000.
  if (!(starts_at.getTime() >= FIRST_INSTANT && ends_at.getTime() - 1 <= LAST_INSTANT)) {
    throw new InvalidWeek('the schedule shows the weeks that lie within 0001-01-01 to 9999-12-31 (UTC): 0001-W01 to 9999-W51 in UTC');
  }
  const dates = Array.from({ length: 7 }, (_, i) => monday.plus({ days: i }).toISODate()!);
  return { week: monday.toFormat("kkkk-'W'WW"), dates, starts_at, ends_at };
}
