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
  /** Each day's local midnight as an instant, Monday to Sunday, then ends_at: day i is [day_starts[i], day_starts[i + 1]). */
  day_starts: Date[];
}

export class InvalidWeek extends Error {}

/**
 * Weeks already resolved: the current week of each zone asked about, and weeks named by `week` or `start` (which do not
 * depend on now), at most MAX_REMEMBERED of those: a week is fifteen local midnights of Luxon's zone arithmetic
 * (through Intl), and nearly every view asks for the current week. The answers are the same either way.
 */
const currentWeeks = new Map<string, Week>();
const namedWeeks = new Map<string, Week>();
const MAX_REMEMBERED = 1000;

/** The week named by `week` (`YYYY-Www`), else the one containing `start` (`YYYY-MM-DD`), else the one containing `now`. */
export function resolveWeek(choice: { week?: string; start?: string }, now: Date, timeZone: string): Week {
  if (choice.week === undefined && choice.start === undefined) {
    const current = currentWeeks.get(timeZone);
    if (current && now >= current.starts_at && now < current.ends_at) return current;
    const week = computeWeek(choice, now, timeZone);
    currentWeeks.set(timeZone, week);
    return week;
  }
  const key = `${timeZone}\0${choice.week ?? ''}\0${choice.start ?? ''}`;
  const named = namedWeeks.get(key);
  if (named) return named;
  const week = computeWeek(choice, now, timeZone);
  if (namedWeeks.size >= MAX_REMEMBERED) namedWeeks.clear();
  namedWeeks.set(key, week);
  return week;
}

/** Which day of the week (0 = Monday) an instant falls on, or undefined outside the week. */
export function dayOfWeek(week: Week, instant: Date): number | undefined {
  if (instant < week.starts_at || instant >= week.ends_at) return undefined;
  let day = 0;
  while (instant >= week.day_starts[day + 1]!) day++;
  return day;
}

function computeWeek(choice: { week?: string; start?: string }, now: Date, timeZone: string): Week {
  let monday: DateTime;
  if (choice.week !== undefined) {
    const match = /^(\d{4})-W(\d{2})$/.exec(choice.week);
    const parsed = match
      ? DateTime.fromObject(
          { weekYear: Number(match[1]), weekNumber: Number(match[2]), weekday: 1 },
          { zone: timeZone },
        )
      : undefined;
    if (!parsed?.isValid || parsed.weekNumber !== Number(match![2]))
      throw new InvalidWeek(`${choice.week} is not an ISO week (YYYY-Www, weeks 01 to 52 or 53)`);
    monday = parsed;
  } else {
    const day =
      choice.start !== undefined
        ? DateTime.fromISO(choice.start, { zone: timeZone })
        : DateTime.fromJSDate(now, { zone: timeZone });
    if (!day.isValid) throw new InvalidWeek(`${choice.start} is not a date`);
    monday = day.startOf('week');
  }
  monday = monday.startOf('day');
  const starts_at = monday.toJSDate();
  const ends_at = monday.plus({ weeks: 1 }).startOf('day').toJSDate();
  // The service keeps instants of the years 0001–9999 (UTC): 9999-W52 ends in the year 10000.
  if (!(starts_at.getTime() >= FIRST_INSTANT && ends_at.getTime() - 1 <= LAST_INSTANT)) {
    throw new InvalidWeek(
      'the schedule shows the weeks that lie within 0001-01-01 to 9999-12-31 (UTC): 0001-W01 to 9999-W51 in UTC',
    );
  }
  // startOf('day') again after each step: where a midnight does not exist (a DST change at 00:00), Luxon resolves it
  // to 01:00, and adding days keeps that wall time.
  const days = Array.from({ length: 7 }, (_, i) => monday.plus({ days: i }).startOf('day'));
  const dates = days.map((day) => day.toISODate()!);
  const day_starts = [...days.map((day) => day.toJSDate()), ends_at];
  return Object.freeze({
    week: monday.toFormat("kkkk-'W'WW"),
    dates: Object.freeze(dates) as string[],
    starts_at,
    ends_at,
    day_starts: Object.freeze(day_starts) as Date[],
  });
}
