// Calendar arithmetic in the student's time zone, shared by the daily loop and its comeback plan.
import { DateTime } from 'luxon';

export interface StudentDay {
  /** Today's date in the student's zone, 'YYYY-MM-DD'. */
  today: string;
  /** The instants today begins and ends (the next day's start), for queries. */
  start: Date;
  end: Date;
}

export function studentDay(now: Date, timeZone: string): StudentDay {
  const day = dayIn(now, timeZone);
  if (!day) throw new RangeError(`Unknown time zone: ${timeZone}`);
  return { ...day };
}

/** The date of an instant in the student's zone, 'YYYY-MM-DD'. */
export function localDate(instant: Date, timeZone: string): string {
  return dayIn(instant, timeZone)?.today ?? DateTime.fromJSDate(instant, { zone: timeZone }).toISODate()!;
}

/**
 * The last two days asked about in each zone (at most two per zone name that exists), the last used first. Nearly every
 * request of a day asks about that day, and Luxon's zone arithmetic (Intl's offsets) was a tenth of the daily loop's
 * CPU: an instant inside a remembered day has its answer without it. Two, because the loop of a student back after
 * missed days also asks about the last day studied, which would otherwise put today out of its place on every request.
 * The answers are the same either way.
 */
const lastDays = new Map<string, StudentDay[]>();

/** The day the instant falls on in the zone; undefined when the zone is unknown. */
function dayIn(instant: Date, timeZone: string): StudentDay | undefined {
  const known = lastDays.get(timeZone);
  if (known) {
    const [first, second] = known;
    if (instant >= first!.start && instant < first!.end) return first;
    if (second && instant >= second.start && instant < second.end) {
      known[0] = second;
      known[1] = first!;
      return second;
    }
  }
  const local = DateTime.fromJSDate(instant, { zone: timeZone });
  if (!local.isValid) return undefined;
  const start = local.startOf('day');
  // The next day's start from the instant, not from this day's start: where a midnight does not exist (Chile's DST
  // change at 00:00), Luxon puts the day's start at 01:00, and a day after it would be 01:00 of the next day.
  const day = {
    today: start.toISODate()!,
    start: start.toJSDate(),
    end: local.plus({ days: 1 }).startOf('day').toJSDate(),
  };
  lastDays.set(timeZone, known ? [day, known[0]!] : [day]);
  return day;
}

/** Whole calendar days from one date to another ('YYYY-MM-DD'): 2026-11-22 to 2026-11-24 is 2. */
export function daysBetween(from: string, to: string): number {
  // A bare ISO date parses as UTC midnight, so the difference is whole days; Luxon's diff was a tenth of the loop's
  // CPU.
  return Math.round((Date.parse(to) - Date.parse(from)) / DAY_MS);
}

const DAY_MS = 86_400_000;

/** The date `days` calendar days after `date`. Dates carry no zone, so DST never shifts them. */
export function addDays(date: string, days: number): string {
  return DateTime.fromISO(date, { zone: 'UTC' }).plus({ days }).toISODate()!;
}

/** The instant the date ('YYYY-MM-DD') begins in the zone. */
export function startOfDate(date: string, timeZone: string): Date {
  return DateTime.fromISO(date, { zone: timeZone }).startOf('day').toJSDate();
}
