// A bounded search over an rrule rule. Pure: no I/O.
//
// rrule 2.8 walks a rule period by period (a day for DAILY, a week for WEEKLY…) and only stops on a result, on
// COUNT or UNTIL after a result, or past the year 9999. A rule whose filters never match (BYMONTH=2;BYMONTHDAY=30)
// therefore walks to 9999: seconds to tens of seconds of CPU on the event loop, and its iterator callback is never
// called, so it cannot stop that walk. What rrule does read once per period is `options.interval`, and it stops when
// that reads 0; a view of the options whose interval reads 0 once a period budget is spent bounds the walk.
import rrule from 'rrule';

const { RRule } = rrule;

/** At most this many dates are looked at in one search (a series' past dates before the one searched for). */
const RESULT_CAP = 10_000;

/**
 * How far ahead a search looks, by rrule's frequency number (YEARLY 0 … DAILY 3), in the rule's periods: a rule with
 * no date this far ahead of its start is refused. Walking a period costs about 5 µs for a day, 12 µs for a week or a
 * month and 100 µs for a year (measured on a loaded 2-core machine), so each horizon costs at most a few ms; a
 * yearly one covers 29 February however far apart leap years fall (2096 → 2104).
 */
export const HORIZONS: ReadonlyArray<{ periods: number; words: string }> = [
  { periods: 8, words: '8 years' },
  { periods: 48, words: '4 years' },
  { periods: 209, words: '4 years' },
  { periods: 366, words: 'year' },
];

/** The days one period covers at least, by frequency number. */
const PERIOD_DAYS = [365, 28, 7, 1];

/** The walk hit its budget before it found a date: the rule has none within the horizon (or too many before it). */
export const EXHAUSTED = Symbol('exhausted');

/** At most how many of the rule's steps (`interval` periods each) fit in `days`. */
export function periodsIn(freq: rrule.Frequency, interval: number, days: number): number {
  return Math.max(0, Math.ceil(days / ((PERIOD_DAYS[freq] ?? 1) * interval)));
}

class BudgetedRule extends RRule {
  exhausted = false;
  /** The periods the last walk began, the first included. */
  walked = 0;

  constructor(
    options: Partial<rrule.Options>,
    private readonly periods: number,
    /** Asked before each further period: false stops the walk as the period budget does. */
    private readonly mayGoOn: () => boolean = () => true,
  ) {
    super(options);
  }

  // Typed loosely: rrule does not export the IterResult types of its signature.
  protected override _iter(result: never): never {
    const options = this.options;
    const interval = options.interval;
    // iter() reads interval once when it starts, then twice per period (its stop check, then the step to the next
    // period).
    const reads = 1 + 2 * this.periods;
    let read = 0;
    this.options = Object.create(options, {
      interval: {
        get: () => {
          // Odd reads start a period (the first one, then each step), even ones are the stop check before a step.
          ++read;
          if (this.exhausted || read > reads || (read % 2 === 0 && !this.mayGoOn())) {
            this.exhausted = true;
            return 0;
          }
          if (read % 2 === 1) this.walked++;
          return interval;
        },
      },
    });
    try {
      return super._iter(result) as never;
    } finally {
      this.options = options;
    }
  }
}

/**
 * The first date of the rule after `after` (or at it, when `inclusive`), walking at most `periods` periods from the
 * rule's dtstart; null when the rule has no more dates (COUNT used up, UNTIL passed), EXHAUSTED when the budget ran
 * out first.
 */
export function firstDateAfter(
  options: Partial<rrule.Options>,
  after: Date,
  inclusive: boolean,
  periods: number,
): Date | null | typeof EXHAUSTED {
  const rule = new BudgetedRule(options, periods);
  let found: Date | null = null;
  let capped = false;
  rule.all((date, seen) => {
    if (inclusive ? date >= after : date > after) {
      found = date;
      return false;
    }
    capped = seen + 1 >= RESULT_CAP;
    return !capped;
  });
  if (found) return found;
  return rule.exhausted || capped ? EXHAUSTED : null;
}

/**
 * What one request may spend on projections, in units of about a tenth of a microsecond of CPU (weights measured with
 * rrule 2.8 and luxon on a loaded 2-core machine; see the costs below and in recurrence.ts). Shared by every search of
 * the request, so the request's cost has one bound however many series it projects.
 */
export class SearchBudget {
  spent = 0;

  constructor(readonly limit: number) {}

  get remaining(): number {
    return Math.max(0, this.limit - this.spent);
  }
}

/** The days rrule builds and filters for one period, by frequency number. */
const PERIOD_DAYS_BUILT = [366, 31, 7, 1];
/**
 * What a period costs whatever its length: rrule 2.8 rebuilds its tables of the year (about 400 entries) for every
 * period, a day's as a year's, and allocates the period's day set as long as the year.
 */
const PERIOD_BASE_COST = 40;
/** Each date rrule hands back: building it, our callback, the checks. */
export const HANDED_COST = 20;
/** Filtering one candidate day costs a unit, and one more per this many values in the lists it is looked up in. */
const FILTER_VALUES_PER_UNIT = 12;
/** BYWEEKNO: rrule works out the year's week numbers on every period, then looks each value up. */
const WEEKNO_COST = 80;
const WEEKNO_VALUE_COST = 8;
/** A negative BYMONTHDAY: rrule rebuilds its table of days counted from the month's end on every period. */
const NEGATIVE_MONTHDAY_COST = 5;
/** BYSETPOS: each position is looked up among the period's dates. */
const SETPOS_VALUE_COST = 35;
/** An nth weekday (1MO, -1FR) of a MONTHLY or YEARLY rule: worked out per month range on every period. */
const NTH_WEEKDAY_COST = 30;

const values = (value: unknown): unknown[] => (value == null ? [] : [value].flat());

/** What rrule's walk of one period of the rule costs, in SearchBudget units, from the parts that make it work. */
export function periodCost(options: Partial<rrule.Options>): number {
  const freq = options.freq!;
  const weekdays = values(options.byweekday) as Array<number | { n?: number | null }>;
  const nth = freq <= RRule.MONTHLY ? weekdays.filter((day) => typeof day === 'object' && day.n).length : 0;
  const monthdays = values(options.bymonthday) as number[];
  const weeknos = values(options.byweekno);
  const filterValues =
    values(options.bymonth).length +
    weekdays.length +
    monthdays.length +
    values(options.byyearday).length +
    weeknos.length;
  const days = PERIOD_DAYS_BUILT[freq] ?? 1;
  const monthRanges = freq === RRule.YEARLY ? values(options.bymonth).length || 1 : 1;
  return (
    PERIOD_BASE_COST +
    days * (1 + Math.ceil(filterValues / FILTER_VALUES_PER_UNIT)) +
    (weeknos.length > 0 ? WEEKNO_COST + WEEKNO_VALUE_COST * weeknos.length : 0) +
    NEGATIVE_MONTHDAY_COST * monthdays.filter((day) => day < 0).length +
    SETPOS_VALUE_COST * values(options.bysetpos).length +
    NTH_WEEKDAY_COST * nth * monthRanges
  );
}

/**
 * What a walk's budget decided, for a caller that keeps the walk: `needs`, the least remaining budget with which every
 * check the walk made passes (then the walk, its dates and its units are the same), and `cut`, whether a check failed.
 */
export interface WalkTrace {
  needs: number;
  cut: boolean;
}

/**
 * The rule's dates in [from, to), in order, in one walk from the rule's dtstart of at most `periods` periods, paid
 * from `budget`: the walk stops when the budget is spent, and the dates found are then the first ones.
 */
export function datesBetween(
  options: Partial<rrule.Options>,
  from: Date,
  to: Date,
  periods: number,
  budget: SearchBudget,
  trace: WalkTrace = { needs: 0, cut: false },
): Date[] {
  const cost = periodCost(options);
  // The budget's one check: passes while `units` fit in what remains (which does not change during the walk).
  const affords = (units: number): boolean => {
    if (units > trace.needs) trace.needs = units;
    const fits = units <= budget.remaining;
    if (!fits) trace.cut = true;
    return fits;
  };
  // rrule walks a first period whatever its budget; each period and date is paid before it starts, with room for a
  // date.
  if (!affords(cost + HANDED_COST)) return [];
  const dates: Date[] = [];
  let handed = 0;
  const spent = (): number => handed * HANDED_COST + rule.walked * cost;
  const rule: BudgetedRule = new BudgetedRule(options, periods, () => affords(spent() + cost + HANDED_COST));
  rule.all((date) => {
    handed++;
    if (date >= to || !affords(spent() + HANDED_COST)) return false;
    if (date >= from) dates.push(date);
    return true;
  });
  budget.spent += spent();
  return dates;
}
