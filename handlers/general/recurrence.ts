// Recurring tasks: checking an iCalendar RRULE and finding the occurrence after a given one. Pure: no I/O.
//
// Time zones. A rule runs in the student's wall-clock time: "weekly on Monday at 09:00" stays at 09:00 in
// Europe/Berlin on both sides of a daylight-saving change, so its UTC time moves by an hour. rrule itself only
// knows UTC, so the rule is evaluated on "floating" dates — the local wall-clock fields written into a Date as if
// they were UTC — and each result is turned back into a real instant in the zone. A wall-clock time that does not
// exist on a day (inside a spring-forward gap) moves forward by the gap, as luxon does.
import { DateTime } from 'luxon';
import rrule from 'rrule';

const { RRule } = rrule;

/** Task rules repeat at most daily: a student task that recurs every hour is a reminder, not a task. */
const FREQUENCIES = new Set(['DAILY', 'WEEKLY', 'MONTHLY', 'YEARLY']);
/** DTSTART and TZID are not taken: the series' first due time and the student's profile give them. */
const PARTS = new Set(['FREQ', 'INTERVAL', 'COUNT', 'UNTIL', 'BYDAY', 'BYMONTHDAY', 'BYMONTH', 'BYYEARDAY', 'BYWEEKNO', 'BYSETPOS', 'BYHOUR', 'BYMINUTE', 'BYSECOND', 'WKST']);

/** The ranges RFC 5545 allows for the numeric BY… parts (negative values count from the end). */
const NUMBER_RANGES: Record<string, { min: number; max: number; signed: boolean }> = {
  BYMONTH: { min: 1, max: 12, signed: false },
  BYMONTHDAY: { min: 1, max: 31, signed: true },
  BYYEARDAY: { min: 1, max: 366, signed: true },
  BYWEEKNO: { min: 1, max: 53, signed: true },
  BYSETPOS: { min: 1, max: 366, signed: true },
  BYHOUR: { min: 0, max: 23, signed: false },
  BYMINUTE: { min: 0, max: 59, signed: false },
  BYSECOND: { min: 0, max: 60, signed: false },
};

export class InvalidRecurrence extends Error {}

interface ParsedRule {
  options: Partial<rrule.Options>;
  /** UNTIL given as a date only (YYYYMMDD): it then includes that whole local day. */
  untilIsDate: boolean;
}

/** The rule without an optional `RRULE:` prefix, as it is stored. */
export function normaliseRecurrence(rule: string): string {
  return rule.trim().replace(/^RRULE:/i, '');
}

/** Throws InvalidRecurrence, with a message a student can act on, unless `rule` is a rule tasks accept. */
export function assertValidRecurrence(rule: string): void {
  const { options } = parse(rule);
  try {
    // rrule reports some mistakes (an unknown weekday, a month 13) only when it builds or expands the rule.
    const dtstart = new Date(Date.UTC(2026, 0, 1, 9));
    new RRule({ ...options, dtstart }).after(dtstart, true);
  } catch {
    throw new InvalidRecurrence('rrule cannot read it: check the weekdays (MO…SU) and the BY… parts');
  }
}

/**
 * The due time of the occurrence after `after`, for a series whose rule started at `seriesStart`, in the student's
 * `timeZone`; null when the rule has no more dates (COUNT used up, UNTIL passed).
 */
export function nextOccurrence(rule: string, seriesStart: Date, after: Date, timeZone: string): Date | null {
  const { options, untilIsDate } = parse(rule);
  const floating = (instant: Date) => toFloating(instant, timeZone);
  if (options.until) {
    // UNTIL=…Z is an instant; a date-only UNTIL is the last local day of the series, included in full.
    options.until = untilIsDate ? new Date(options.until.getTime() + 86_400_000 - 1) : floating(options.until);
  }
  const next = new RRule({ ...options, dtstart: floating(seriesStart) }).after(floating(after), false);
  return next ? fromFloating(next, timeZone) : null;
}

function parse(rule: string): ParsedRule {
  const text = normaliseRecurrence(rule);
  const seen = new Set<string>();
  for (const part of text.split(';')) {
    const match = /^([A-Z]+)=([^=;]+)$/i.exec(part);
    if (!match) throw new InvalidRecurrence(`a part is not NAME=VALUE: ${JSON.stringify(part)}`);
    const name = match[1]!.toUpperCase();
    const value = match[2]!;
    if (!PARTS.has(name)) throw new InvalidRecurrence(`${name} is not accepted in a task's rule (the start is due_at, the time zone the student's)`);
    if (seen.has(name)) throw new InvalidRecurrence(`${name} appears twice`);
    seen.add(name);
    if (name === 'FREQ' && !FREQUENCIES.has(value.toUpperCase())) throw new InvalidRecurrence('FREQ must be DAILY, WEEKLY, MONTHLY or YEARLY');
    if ((name === 'COUNT' || name === 'INTERVAL') && !/^[1-9]\d{0,3}$/.test(value)) throw new InvalidRecurrence(`${name} must be a whole number from 1 to 9999`);
    const range = NUMBER_RANGES[name];
    if (range && !value.split(',').every((n) => inRange(n, range))) {
      throw new InvalidRecurrence(`${name} takes numbers from ${range.signed ? `±${range.min}` : range.min} to ${range.signed ? `±${range.max}` : range.max}`);
    }
    if (name === 'UNTIL' && !/^\d{8}(T\d{6}Z)?$/.test(value)) throw new InvalidRecurrence('UNTIL must be a date (20261231) or a UTC time (20261231T235959Z)');
  }
  if (!seen.has('FREQ')) throw new InvalidRecurrence('FREQ is missing (DAILY, WEEKLY, MONTHLY or YEARLY)');
  if (seen.has('COUNT') && seen.has('UNTIL')) throw new InvalidRecurrence('COUNT and UNTIL cannot be combined');
  try {
    return { options: RRule.parseString(text), untilIsDate: /UNTIL=\d{8}(;|$)/i.test(text) };
  } catch (error) {
    throw new InvalidRecurrence(`rrule cannot read it: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function inRange(text: string, range: { min: number; max: number; signed: boolean }): boolean {
  if (!/^[+-]?\d{1,3}$/.test(text)) return false;
  const n = Number(text);
  return (n >= range.min && n <= range.max) || (range.signed && -n >= range.min && -n <= range.max);
}

/** The wall-clock time of `instant` in `timeZone`, written into a Date's UTC fields. */
function toFloating(instant: Date, timeZone: string): Date {
  const local = DateTime.fromJSDate(instant, { zone: timeZone });
  return new Date(Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute, local.second, local.millisecond));
}

/** The instant at which `timeZone` shows the wall-clock time held in `floating`'s UTC fields. */
function fromFloating(floating: Date, timeZone: string): Date {
  return DateTime.fromObject(
    {
      year: floating.getUTCFullYear(),
      month: floating.getUTCMonth() + 1,
      day: floating.getUTCDate(),
      hour: floating.getUTCHours(),
      minute: floating.getUTCMinutes(),
      second: floating.getUTCSeconds(),
      millisecond: floating.getUTCMilliseconds(),
    },
    { zone: timeZone },
  ).toJSDate();
}
