// Recurring tasks: checking an iCalendar RRULE and finding the occurrence after a given one. Pure: no I/O.
//
// Time zones. A rule runs in the student's wall-clock time: "weekly on Monday at 09:00" stays at 09:00 in
// Europe/Berlin on both sides of a daylight-saving change, so its UTC time moves by an hour. rrule itself only
// knows UTC, so the rule is evaluated on "floating" dates — the local wall-clock fields written into a Date as if
// they were UTC — and each result is turned back into a real instant in the zone. A wall-clock time that does not
// exist on a day (inside a spring-forward gap) moves forward by the gap, as luxon does.
import { DateTime, Info, Settings, type Zone } from 'luxon';
import rrule from 'rrule';
import { LAST_INSTANT } from './instants.ts';
import {
  datesBetween,
  EXHAUSTED,
  firstDateAfter,
  HORIZONS,
  periodsIn,
  SearchBudget,
  type WalkTrace,
} from './recurrence-search.ts';

const { RRule } = rrule;

const DAY_MS = 86_400_000;

/** A COUNT series is walked from its first date: past this many horizons from there it ends, so a search stays cheap. */
const COUNTED_SERIES_HORIZONS = 3;

/** Task rules repeat at most daily: a student task that recurs every hour is a reminder, not a task. */
const FREQUENCIES = new Set(['DAILY', 'WEEKLY', 'MONTHLY', 'YEARLY']);
/** Each date of a rule costs work to find; a task due more often than hourly is not a task either. */
const MAX_TIMES_A_DAY = 24;
/** DTSTART and TZID are not taken: the series' first due time and the student's profile give them. */
const PARTS = new Set([
  'FREQ',
  'INTERVAL',
  'COUNT',
  'UNTIL',
  'BYDAY',
  'BYMONTHDAY',
  'BYMONTH',
  'BYYEARDAY',
  'BYWEEKNO',
  'BYSETPOS',
  'BYHOUR',
  'BYMINUTE',
  'BYSECOND',
  'WKST',
]);

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

/**
 * Throws InvalidRecurrence, with a message a student can act on, unless `rule` is a rule tasks accept for a series
 * that starts at `seriesStart` in `timeZone`: among others, it must have a date within the search horizon.
 */
export function assertValidRecurrence(rule: string, seriesStart: Date, timeZone: string): void {
  const { options } = parse(rule);
  const horizon = HORIZONS[options.freq!]!;
  let first: ReturnType<typeof firstDateAfter>;
  try {
    // rrule reports some mistakes (an unknown weekday, a month 13) only when it builds or expands the rule.
    const floating = toFloating(seriesStart, timeZone);
    const dtstart = shifted(floating, rruleYears(floating));
    first = firstDateAfter({ ...options, dtstart }, dtstart, true, horizon.periods);
  } catch {
    throw new InvalidRecurrence('rrule cannot read it: check the weekdays (MO…SU) and the BY… parts');
  }
  if (first === EXHAUSTED) throw new InvalidRecurrence(`it has no date in the ${horizon.words} after due_at`);
}

/**
 * The due time of the occurrence after `after`, for a series whose rule started at `seriesStart`, in the student's
 * `timeZone`; null when the rule has no more dates (COUNT used up, UNTIL passed) or none within the search horizon.
 */
export function nextOccurrence(rule: string, seriesStart: Date, after: Date, timeZone: string): Date | null {
  const { options, untilIsDate } = parse(rule);
  const years = rruleYears(toFloating(seriesStart, timeZone), toFloating(after, timeZone));
  const start = shifted(toFloating(seriesStart, timeZone), years);
  const from = shifted(toFloating(after, timeZone), years);
  floatUntil(options, untilIsDate, timeZone, years);
  const horizon = HORIZONS[options.freq!]!.periods;
  let next: ReturnType<typeof firstDateAfter>;
  if (options.count) {
    // COUNT counts from the series' first date, so the walk starts there: the periods up to `after`, then the horizon.
    const elapsed = periodsIn(options.freq!, options.interval ?? 1, (from.getTime() - start.getTime()) / DAY_MS);
    next = firstDateAfter(
      { ...options, dtstart: start },
      from,
      false,
      Math.min(elapsed + horizon, COUNTED_SERIES_HORIZONS * horizon),
    );
  } else {
    // Without COUNT the series from a later period start is the same series: the walk starts just before `after`.
    next = firstDateAfter(restartedBefore(options, start, from), from, false, horizon + 1);
  }
  const due = next instanceof Date ? fromFloating(shifted(next, -years), timeZone) : null;
  // A wall-clock date of 9999 west of UTC is an instant of the year 10000, past what the service keeps.
  return due && due.getTime() <= LAST_INSTANT ? due : null;
}

/** UNTIL=…Z is an instant; a date-only UNTIL is the last local day of the series, included in full. */
function floatUntil(options: Partial<rrule.Options>, untilIsDate: boolean, timeZone: string, years: number): void {
  if (options.until)
    options.until = shifted(
      untilIsDate ? new Date(options.until.getTime() + DAY_MS - 1) : toFloating(options.until, timeZone),
      years,
    );
}

/**
 * How many years later to search: rrule builds its dates with Date.UTC, which reads the years 0–99 as 1900–1999. The
 * Gregorian calendar repeats every 400 years (weekdays, leap days, ISO weeks), so a search that involves such a year
 * is run 400 years later and its result moved back.
 */
function rruleYears(...floating: Date[]): number {
  return floating.some((date) => date.getUTCFullYear() < 100) ? 400 : 0;
}

function shifted(date: Date, years: number): Date {
  const moved = new Date(date);
  moved.setUTCFullYear(moved.getUTCFullYear() + years);
  return moved;
}

/**
 * The rule's options for a series that starts on the first period of its step (INTERVAL) at or before `from`, with
 * every part rrule would take from the original start (weekday, day of month, time of day) written out. With
 * `onFromsDay`, a YEARLY or MONTHLY series without BYSETPOS starts on `from`'s day instead when that day lies in that
 * period: the period's dates do not depend on where in it the walk starts (only BYSETPOS counts from the period's
 * start), and rrule hands back every date from the walk's start, so a walk from 1 January to a week in December
 * would build each of the dates in between (8,000 for a rule due every hour).
 */
function restartedBefore(
  options: Partial<rrule.Options>,
  start: Date,
  from: Date,
  onFromsDay = false,
): Partial<rrule.Options> {
  const pinned: Partial<rrule.Options> = {
    ...options,
    byhour: options.byhour ?? start.getUTCHours(),
    byminute: options.byminute ?? start.getUTCMinutes(),
    bysecond: options.bysecond ?? start.getUTCSeconds(),
  };
  // rrule's own defaults (parseoptions.ts) when no part picks days.
  if (
    options.byweekno == null &&
    options.byyearday == null &&
    options.bymonthday == null &&
    options.byweekday == null
  ) {
    if (options.freq === RRule.YEARLY)
      Object.assign(pinned, { bymonth: options.bymonth ?? start.getUTCMonth() + 1, bymonthday: start.getUTCDate() });
    if (options.freq === RRule.MONTHLY) pinned.bymonthday = start.getUTCDate();
    if (options.freq === RRule.WEEKLY) pinned.byweekday = (start.getUTCDay() + 6) % 7; // rrule counts MO = 0
  }
  const interval = options.interval ?? 1;
  const steps = (elapsed: number) => Math.floor(elapsed / interval) * interval;
  const days = Math.floor(from.getTime() / DAY_MS) - Math.floor(start.getTime() / DAY_MS);
  const months = (from.getUTCFullYear() - start.getUTCFullYear()) * 12 + from.getUTCMonth() - start.getUTCMonth();
  const base = floatingDate(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate());
  if (options.freq === RRule.DAILY) base.setUTCDate(base.getUTCDate() + steps(days));
  if (options.freq === RRule.WEEKLY) {
    // rrule's weeks begin on WKST (its first one at the series' start): BYSETPOS picks among a whole such week.
    const wkst = typeof options.wkst === 'number' ? options.wkst : (options.wkst?.weekday ?? 0);
    const intoWeek = (date: Date) => (date.getUTCDay() + 6 - wkst + 7) % 7; // rrule counts MO = 0
    base.setUTCDate(base.getUTCDate() - intoWeek(start));
    const weeks = Math.floor((days + intoWeek(start) - intoWeek(from)) / 7);
    base.setUTCDate(base.getUTCDate() + 7 * steps(weeks));
  }
  if (options.freq === RRule.MONTHLY) base.setUTCMonth(base.getUTCMonth() + steps(months), 1);
  // rrule's years are calendar years: from 1 January of the series' first year, every INTERVAL years.
  if (options.freq === RRule.YEARLY)
    base.setUTCFullYear(base.getUTCFullYear() + steps(from.getUTCFullYear() - start.getUTCFullYear()), 0, 1);
  const samePeriod =
    base.getUTCFullYear() === from.getUTCFullYear() &&
    (options.freq === RRule.YEARLY || base.getUTCMonth() === from.getUTCMonth());
  if (
    onFromsDay &&
    options.bysetpos == null &&
    (options.freq === RRule.YEARLY || options.freq === RRule.MONTHLY) &&
    samePeriod
  ) {
    base.setUTCMonth(from.getUTCMonth(), from.getUTCDate());
  }
  // rrule takes the milliseconds of every date from dtstart's.
  base.setUTCMilliseconds(start.getUTCMilliseconds());
  return { ...pinned, dtstart: base > start ? base : start };
}

function parse(rule: string): ParsedRule {
  const text = normaliseRecurrence(rule);
  const seen = new Set<string>();
  let timesADay = 1;
  for (const part of text.split(';')) {
    const match = /^([A-Z]+)=([^=;]+)$/i.exec(part);
    if (!match) throw new InvalidRecurrence(`a part is not NAME=VALUE: ${JSON.stringify(part)}`);
    const name = match[1]!.toUpperCase();
    const value = match[2]!;
    if (!PARTS.has(name))
      throw new InvalidRecurrence(
        `${name} is not accepted in a task's rule (the start is due_at, the time zone the student's)`,
      );
    if (seen.has(name)) throw new InvalidRecurrence(`${name} appears twice`);
    seen.add(name);
    if (name === 'FREQ' && !FREQUENCIES.has(value.toUpperCase()))
      throw new InvalidRecurrence('FREQ must be DAILY, WEEKLY, MONTHLY or YEARLY');
    if ((name === 'COUNT' || name === 'INTERVAL') && !/^[1-9]\d{0,3}$/.test(value))
      throw new InvalidRecurrence(`${name} must be a whole number from 1 to 9999`);
    const range = NUMBER_RANGES[name];
    if (range && !value.split(',').every((n) => inRange(n, range))) {
      throw new InvalidRecurrence(
        `${name} takes numbers from ${range.signed ? `±${range.min}` : range.min} to ${range.signed ? `±${range.max}` : range.max}`,
      );
    }
    if (name === 'BYHOUR' || name === 'BYMINUTE' || name === 'BYSECOND') timesADay *= value.split(',').length;
    if (name === 'UNTIL' && !/^\d{8}(T\d{6}Z)?$/.test(value))
      throw new InvalidRecurrence('UNTIL must be a date (20261231) or a UTC time (20261231T235959Z)');
    if (name === 'UNTIL' && value < '0100') throw new InvalidRecurrence('UNTIL must lie in the years 0100 to 9999');
  }
  if (!seen.has('FREQ')) throw new InvalidRecurrence('FREQ is missing (DAILY, WEEKLY, MONTHLY or YEARLY)');
  if (seen.has('COUNT') && seen.has('UNTIL')) throw new InvalidRecurrence('COUNT and UNTIL cannot be combined');
  if (timesADay > MAX_TIMES_A_DAY)
    throw new InvalidRecurrence(`BYHOUR, BYMINUTE and BYSECOND give more than ${MAX_TIMES_A_DAY} times a day`);
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

/**
 * Wall-clock times already read, by zone and instant: the same instants come back on every view of a week (its bounds,
 * shared by every student of the zone; a series' start and open occurrence, until it changes), and reading one is
 * Intl lookups through luxon, most of a projection's cost. An instant has one wall-clock time in a zone, so a kept
 * answer is the answer. (The other way, a wall-clock time that occurs twice is resolved by luxon after the zone's
 * offset at the moment of asking, so fromFloating keeps its answers by that offset too.) Forgotten all at once past
 * FLOATING_KEPT.
 */
const floatingTimes = new Map<string, number>();
const FLOATING_KEPT = 10_000;

/** The wall-clock time of `instant` in `timeZone`, written into a Date's UTC fields. */
function toFloating(instant: Date, timeZone: string): Date {
  const key = `${timeZone} ${instant.getTime()}`;
  let floating = floatingTimes.get(key);
  if (floating === undefined) {
    floating = readFloating(instant, timeZone).getTime();
    if (floatingTimes.size >= FLOATING_KEPT) floatingTimes.clear();
    floatingTimes.set(key, floating);
  }
  return new Date(floating);
}

function readFloating(instant: Date, timeZone: string): Date {
  const local = DateTime.fromJSDate(instant, { zone: timeZone });
  return floatingDate(
    local.year,
    local.month - 1,
    local.day,
    local.hour,
    local.minute,
    local.second,
    local.millisecond,
  );
}

/** Date.UTC, without its reading of years 0–99 as 1900–1999. */
function floatingDate(
  year: number,
  monthIndex: number,
  day: number,
  hour = 0,
  minute = 0,
  second = 0,
  millisecond = 0,
): Date {
  const date = new Date(0);
  date.setUTCFullYear(year, monthIndex, day);
  date.setUTCHours(hour, minute, second, millisecond);
  return date;
}

/** luxon's zone for a name, as `DateTime.fromObject(…, { zone })` reads it (IANA names, UTC, fixed offsets). */
const zones = new Map<string, Zone>();

function zoneOf(timeZone: string): Zone {
  let zone = zones.get(timeZone);
  if (zone === undefined) {
    zone = Info.normalizeZone(timeZone);
    // Names come from profiles, checked against the known zones; the bound is for whatever else calls this.
    if (zones.size >= ZONES_KEPT) zones.clear();
    zones.set(timeZone, zone);
  }
  return zone;
}
const ZONES_KEPT = 1_000;

/**
 * The zone's offset (minutes) now, by luxon's clock: the first guess luxon's `DateTime.fromObject` starts from, which
 * decides which instant a wall-clock time that occurs twice (an autumn hour) becomes. Kept for the second it was read
 * in: luxon reads an offset from Intl's fields of the instant, to the second, against the instant rounded down to the
 * second, and the time zone database changes offsets at whole seconds, so every instant of a second has the same
 * offset. One Intl lookup a second per zone instead of one a week view (the lookup was most of a view's projection).
 */
function offsetNow(timeZone: string): number {
  const now = Settings.now();
  const second = Math.floor(now / 1000);
  const known = offsetsNow.get(timeZone);
  if (known !== undefined && known.second === second) return known.offset;
  const offset = zoneOf(timeZone).offset(now);
  if (offsetsNow.size >= ZONES_KEPT) offsetsNow.clear();
  offsetsNow.set(timeZone, { second, offset });
  return offset;
}
const offsetsNow = new Map<string, { second: number; offset: number }>();

/**
 * Instants already found for a wall-clock time, by zone, the zone's offset at the time of asking and the wall-clock
 * time: the occurrences of a week come back on every view of it. The answer is a function of those three (luxon's
 * offsets of a zone are a function of the instant), so a kept answer is the answer. Forgotten all at once past
 * INSTANTS_KEPT.
 */
const instantsFound = new Map<string, number>();
const INSTANTS_KEPT = 10_000;

/**
 * The instant at which `timeZone` shows the wall-clock time held in `floating`'s UTC fields: what
 * `DateTime.fromObject(fields, { zone }).toJSDate()` answers when the zone's offset at the time of asking is
 * `nowOffset`. Its steps are luxon's own (`fixOffset` in luxon 3.7's datetime.js, with luxon's offsets of the zone), the
 * arithmetic written in the same order so that fractional offsets (a zone's local mean time, +05:07:48) round alike,
 * without building a DateTime: a wall-clock time valid once in the zone is that instant; one that occurs twice is the
 * one whose offset is the zone's at the time of asking, when it is one of the two; one inside a spring-forward gap
 * moves forward by the gap. test/unit/wall-clock-instants.test.ts holds it to luxon's answer around the transitions of
 * several zones, asked at different times of the year.
 */
function fromFloating(floating: Date, timeZone: string, nowOffset = offsetNow(timeZone)): Date {
  const local = floating.getTime();
  const key = `${timeZone} ${nowOffset} ${local}`;
  let instant = instantsFound.get(key);
  if (instant === undefined) {
    const zone = zoneOf(timeZone);
    let guess = local - nowOffset * 60 * 1000;
    const offset = zone.offset(guess);
    if (offset !== nowOffset) {
      guess -= (offset - nowOffset) * 60 * 1000;
      const again = zone.offset(guess);
      if (again !== offset) guess = local - Math.min(offset, again) * 60 * 1000;
    }
    instant = guess;
    if (instantsFound.size >= INSTANTS_KEPT) instantsFound.clear();
    instantsFound.set(key, instant);
  }
  return new Date(instant);
}

/** The wall-clock time conversion as luxon does it, for tests that hold fromFloating to it. */
export const wallClock = { fromFloating, offsetNow };

/** At most this many projected occurrences of one series in one range (24 a day for a week, with room). */
export const MAX_PROJECTED = 200;

/**
 * What one week view may spend projecting all its series (SearchBudget units, about a tenth of a microsecond each):
 * about 15 ms of CPU on the machine the weights were measured on, whatever the series' rules. A student at the limit of
 * open series, each due a few times a week, needs about half of it. Series are projected in order of their open
 * occurrence; those the budget does not reach show no projected occurrences.
 */
export const WEEK_PROJECTION_BUDGET = 150_000;

/**
 * At most this many projected occurrences in one week view, all series together (35 a day): more is not a week a
 * student reads, and each costs its place in the response.
 */
export const WEEK_PROJECTED_MAX = 250;

/**
 * Turning a wall-clock time into an instant of a zone, weighed as luxon's conversion with its Intl lookups (its cost is
 * in docs/performance.md). Charged so although fromFloating now keeps its answers, so that a view's budget reaches the
 * series it reached.
 */
export const CONVERSION_COST = 200;
/** What each series costs before its walk: reading its rule, building rrule's iterator, its start in the zone (~70 µs). */
export const SERIES_COST = 700;
/** The most series one week view can pay for: a student's series past these need not even be read. */
export const WEEK_SERIES_MAX = Math.floor(WEEK_PROJECTION_BUDGET / SERIES_COST);

/**
 * A range's bounds are instants, the walk runs in wall-clock time: it is widened by the most a zone's offset moves
 * (a DST change, at most a few hours), and each date found is checked against the instants.
 */
const RANGE_SLACK_MS = 3 * 3_600_000;

/**
 * A series' walk through a range as a projection made it with budget to spare: its wall-clock dates (epoch ms of the
 * floating dates, in order), the units it cost, and the least remaining budget with which it is walked the same.
 */
interface Walk {
  floating: readonly number[];
  units: number;
  needs: number;
}

/**
 * Walks of series kept across projections (week views), by what a walk depends on: the zone, the series' rule and
 * start, where the walk begins (the series' open occurrence, or the range's start when that comes first) and the
 * range's end. A task whose rule, start or open occurrence changes is another key, so an edit is seen at once; a walk
 * is the same for the same key (rrule and the zone's offsets are functions of their inputs), and it is reused only
 * where the projection's remaining budget passes every check the walk made, so the dates and the units charged are
 * what walking again would give. Bounded by walks and by the dates they hold; the least recently used go first.
 */
export class KeptWalks {
  private readonly walks = new Map<string, Walk>();
  private dates = 0;

  constructor(
    readonly maxWalks = 10_000,
    readonly maxDates = 200_000,
  ) {}

  get size(): number {
    return this.walks.size;
  }

  get(key: string): Walk | undefined {
    const walk = this.walks.get(key);
    if (walk !== undefined) {
      // Last used last: the map's order is the eviction order.
      this.walks.delete(key);
      this.walks.set(key, walk);
    }
    return walk;
  }

  set(key: string, walk: Walk): void {
    const known = this.walks.get(key);
    if (known !== undefined) {
      this.walks.delete(key);
      this.dates -= known.floating.length;
    }
    if (walk.floating.length > this.maxDates) return;
    this.walks.set(key, walk);
    this.dates += walk.floating.length;
    for (const [oldest, old] of this.walks) {
      if (this.walks.size <= this.maxWalks && this.dates <= this.maxDates) break;
      this.walks.delete(oldest);
      this.dates -= old.floating.length;
    }
  }

  clear(): void {
    this.walks.clear();
    this.dates = 0;
  }
}

/** The process's kept walks, which the week view's projections share. */
export const keptWalks = new KeptWalks();

/**
 * The projections of one range (a week view) in one zone, under one budget shared by all its series. Wall-clock times
 * are turned into instants once per range: series due at the same times (09:00 daily) share the work. Given `kept`,
 * each series' walk is looked up there first and kept there after (see KeptWalks).
 */
export class RangeProjection {
  readonly budget: SearchBudget;
  private readonly instants = new Map<number, Date>();
  private shown = 0;
  private readonly fromFloating: Date;
  private readonly toFloating: Date;
  /** The zone's offset when the first wall-clock time is turned into an instant (luxon's first guess; see fromFloating). */
  private nowOffset: number | undefined;

  constructor(
    readonly timeZone: string,
    readonly from: Date,
    readonly to: Date,
    limit = Infinity,
    /** At most this many occurrences, all series together. */
    private readonly shownMax = Infinity,
    private readonly kept?: KeptWalks,
  ) {
    this.budget = new SearchBudget(limit);
    this.fromFloating = toFloating(from, timeZone);
    this.toFloating = toFloating(to, timeZone);
  }

  /**
   * The due times of a series' occurrences after `after` (its latest real occurrence) in the range, at most `max`:
   * what a calendar shows of the series' future before those occurrences exist. One walk per series, paid from the
   * budget: a series without COUNT is walked from the start of its rule's period that holds the range, not from its
   * first date; when the rule has several times a day and no BYSETPOS, the walk finds days, not times, and the times
   * are written out within the range only, so a dense rule costs what its days cost. A rule the service no longer
   * accepts (stored before a check) projects nothing.
   */
  occurrences(rule: string, seriesStart: Date, after: Date, max = MAX_PROJECTED): Date[] {
    const { budget, from, to } = this;
    max = Math.min(max, this.shownMax - this.shown);
    if (budget.remaining < SERIES_COST || max <= 0 || after >= to) return [];
    budget.spent += SERIES_COST;
    const floating = this.walked(rule, seriesStart, after);
    const dates: Date[] = [];
    for (const local of floating) {
      if (dates.length >= max) break;
      const due = this.instant(local);
      if (!due) break;
      if (due > after && due >= from && due < to && due.getTime() <= LAST_INSTANT) dates.push(due);
    }
    this.shown += dates.length;
    return dates;
  }

  /** The series' wall-clock dates the range's walk finds (epoch ms of floating dates), kept or walked. */
  private walked(rule: string, seriesStart: Date, after: Date): readonly number[] {
    const { budget, kept } = this;
    const lower = after >= this.from ? after : this.from;
    const key = kept && `${this.timeZone}\n${seriesStart.getTime()}\n${lower.getTime()}\n${this.to.getTime()}\n${rule}`;
    const known = key ? kept!.get(key) : undefined;
    if (known && budget.remaining >= known.needs) {
      budget.spent += known.units;
      return known.floating;
    }
    const before = budget.spent;
    const trace: WalkTrace = { needs: 0, cut: false };
    const floating = this.walk(rule, seriesStart, after, trace);
    if (key && !trace.cut) kept!.set(key, { floating, units: budget.spent - before, needs: trace.needs });
    return floating;
  }

  private walk(rule: string, seriesStart: Date, after: Date, trace: WalkTrace): number[] {
    const { budget, timeZone, from } = this;
    let parsed: ParsedRule;
    try {
      parsed = parse(rule);
    } catch (error) {
      if (error instanceof InvalidRecurrence) return [];
      throw error;
    }
    const { options, untilIsDate } = parsed;
    const lowerFloating = after >= from ? toFloating(after, timeZone) : this.fromFloating;
    const startFloating = toFloating(seriesStart, timeZone);
    const years = rruleYears(startFloating, lowerFloating, this.toFloating);
    const start = shifted(startFloating, years);
    const walkFrom = new Date(shifted(lowerFloating, years).getTime() - RANGE_SLACK_MS);
    const walkTo = new Date(shifted(this.toFloating, years).getTime() + RANGE_SLACK_MS);
    floatUntil(options, untilIsDate, timeZone, years);
    const freq = options.freq!;
    const walk = options.count ? { ...options, dtstart: start } : restartedBefore(options, start, walkFrom, true);
    const walked = (end: Date) =>
      periodsIn(freq, options.interval ?? 1, (end.getTime() - walk.dtstart!.getTime()) / DAY_MS) + 1;
    const periods = options.count
      ? Math.min(walked(walkTo), COUNTED_SERIES_HORIZONS * HORIZONS[freq]!.periods)
      : walked(walkTo);
    const times = options.count || options.bysetpos ? [] : timesOfDay(walk);
    let floating: Date[];
    if (times.length > 1) {
      // Each day is found once, by its last time: a day with a time at or after walkFrom has its last one there too.
      const last = times.at(-1)!;
      const until = walk.until && new Date(walk.until.getTime() + DAY_MS);
      const days = datesBetween(
        { ...walk, byhour: last[0], byminute: last[1], bysecond: last[2], until },
        walkFrom,
        new Date(walkTo.getTime() + DAY_MS),
        periods,
        budget,
        trace,
      );
      floating = days.flatMap((day) =>
        times
          .map(([hour, minute, second]) => {
            const date = new Date(day);
            date.setUTCHours(hour, minute, second); // the milliseconds stay the day's: rrule takes them from dtstart
            return date;
          })
          .filter(
            (date) => date >= walk.dtstart! && (!walk.until || date <= walk.until) && date >= walkFrom && date < walkTo,
          ),
      );
    } else {
      floating = datesBetween(walk, walkFrom, walkTo, periods, budget, trace);
    }
    return floating.map((date) => (years === 0 ? date.getTime() : shifted(date, -years).getTime()));
  }

  /** The instant at which the zone shows the floating time `local`, or undefined when the budget cannot pay for it. */
  private instant(local: number): Date | undefined {
    const known = this.instants.get(local);
    if (known) return known;
    if (this.budget.remaining < CONVERSION_COST) return undefined;
    this.budget.spent += CONVERSION_COST;
    this.nowOffset ??= offsetNow(this.timeZone);
    const instant = fromFloating(new Date(local), this.timeZone, this.nowOffset);
    this.instants.set(local, instant);
    return instant;
  }
}

/** The projected occurrences of one series in [from, to), in a range of its own (see RangeProjection). */
export function occurrencesBetween(
  rule: string,
  seriesStart: Date,
  after: Date,
  from: Date,
  to: Date,
  timeZone: string,
): Date[] {
  return new RangeProjection(timeZone, from, to).occurrences(rule, seriesStart, after);
}

/** The times of day of a rule whose BYHOUR, BYMINUTE and BYSECOND are all given, in order: every combination. */
function timesOfDay(options: Partial<rrule.Options>): Array<[number, number, number]> {
  const list = (value: number | number[] | null | undefined) =>
    [...new Set([value ?? []].flat())].sort((a, b) => a - b);
  return list(options.byhour).flatMap((h) =>
    list(options.byminute).flatMap((m) => list(options.bysecond).map((s): [number, number, number] => [h, m, s])),
  );
}
