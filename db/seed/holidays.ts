// Public holidays (days off) of a country and year, computed from date-holidays: no I/O, no database.
// Its callers in the server load it on demand (import()): date-holidays and the time-zone data it brings are ~2.2 MB
// of the server's bundle, which every start would otherwise compile and run, for a year that is rarely missing.
import Holidays, { type HolidaysTypes } from 'date-holidays';
import { holidaysComputable } from './holiday-years.ts';

export interface HolidaySeed {
  country_code: string;
  /** The calendar date in the country, YYYY-MM-DD. */
  on_date: string;
  /** Local-language name + " / " + English name (once when they are the same). */
  name: string;
  is_break: boolean;
  description: string;
}

const DAY_MS = 86_400_000;
/** A run of consecutive days off at least this long is a study break (see `computeHolidays`). */
const BREAK_MIN_DAYS = 3;

/** What the holiday is, by English name, for the countries we seed; other countries get a generic sentence. */
const DESCRIPTIONS: Record<string, Record<string, string>> = {
  KZ: {
    "New Year's Day": 'New Year celebration',
    'Orthodox Christmas': 'Orthodox Christmas, celebrated on 7 January',
    "International Women's Day": "International Women's Day, honouring women",
    'Constitution Day': 'Anniversary of the Constitution of Kazakhstan',
    Nauryz: 'Spring equinox festival and traditional new year',
    "People's Unity Day": 'Day of the unity of the peoples of Kazakhstan',
    'Defender of the Fatherland Day': "Day of the defenders of the homeland and Kazakhstan's armed forces",
    'Victory Day': 'Remembrance of the victory in the Second World War',
    'Eid al-Adha': 'Kurban Ait, the Islamic feast of sacrifice (first day)',
    'Capital City Day': 'Anniversary of Astana as the capital',
    'Republic Day': 'Anniversary of the declaration of state sovereignty in 1990',
    'Independence Day': 'Anniversary of the independence of Kazakhstan in 1991',
  },
  RU: {
    "New Year's Day": 'New Year celebration',
    'New Year Holiday': 'Official New Year holidays',
    'Christmas Day': 'Orthodox Christmas, celebrated on 7 January',
    'Defender of the Fatherland Day': 'Day honouring the armed forces and veterans',
    "International Women's Day": "International Women's Day, honouring women",
    'Spring and Labour Day': 'Spring and Labour Day (May Day)',
    'Victory Day': 'Remembrance of the victory in the Second World War',
    'Russia Day': 'National day, marking the 1990 declaration of state sovereignty',
    'Unity Day': 'National Unity Day, recalling the liberation of Moscow in 1612',
  },
};

const NUMBER_WORDS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'];

let countryNames: Record<string, string> | undefined;

/** Supported country codes → English names; loaded once, the data set is large. */
function supportedCountries(): Record<string, string> {
  countryNames ??= new Holidays().getCountries('en');
  return countryNames;
}

/** True when date-holidays knows the country; the code is two letters in any case. */
export function isHolidayCountrySupported(countryCode: string): boolean {
  return /^[A-Za-z]{2}$/.test(countryCode) && countryCode.toUpperCase() in supportedCountries();
}

interface DayOff {
  date: string;
  local: string;
  english: string;
  substitute: boolean;
}

/**
 * One row per calendar day off (type 'public') in `year`.
 *
 * `is_break` rule: a row is a study break when its date lies in a run of three or more consecutive calendar
 * days that are all public days off. The run may join differently named holidays, because date-holidays
 * splits Russia's 1–8 January break into New Year's Day, New Year Holiday (2–6 and 8) and Christmas (7);
 * weekends do not join runs, so a one- or two-day holiday next to a weekend stays false.
 */
export function computeHolidays(countryCode: string, year: number): HolidaySeed[] {
  const code = countryCode.toUpperCase();
  if (!isHolidayCountrySupported(code))
    throw new RangeError(`unsupported holiday country: ${JSON.stringify(countryCode)}`);
  if (!holidaysComputable(year)) throw new RangeError(`invalid year: ${year}`);

  const hd = new Holidays(code);
  // A multi-day entry that runs past 31 December is cut there, so each year's rows are exactly that year's.
  const days = daysOff(hd, year).filter((d) => d.date.startsWith(`${year}-`));
  // Neighbouring years only matter for runs across New Year's Eve.
  const allDates = new Set([...daysOff(hd, year - 1), ...days, ...daysOff(hd, year + 1)].map((d) => d.date));

  const rows = new Map<string, { row: HolidaySeed; substitute: boolean }>();
  for (const day of days) {
    const name = day.local === day.english ? day.english : `${day.local} / ${day.english}`;
    const key = `${day.date}|${name}`;
    const existing = rows.get(key);
    // date-holidays can put a substitute on a date that is already the holiday itself (KZ Nauryz 2026): keep the
    // holiday.
    if (existing && (day.substitute || !existing.substitute)) continue;
    const runLength = runAround(allDates, day.date);
    const isBreak = runLength >= BREAK_MIN_DAYS;
    rows.set(key, {
      substitute: day.substitute,
      row: {
        country_code: code,
        on_date: day.date,
        name,
        is_break: isBreak,
        description: describe(code, day, isBreak ? runLength : 0),
      },
    });
  }
  return [...rows.values()]
    .map((r) => r.row)
    .sort((a, b) => a.on_date.localeCompare(b.on_date) || a.name.localeCompare(b.name));
}

/** Public days off of a year, one per calendar day, with the local and English names of each. */
function daysOff(hd: Holidays, year: number): DayOff[] {
  const localLanguage = hd.getLanguages()[0] ?? 'en';
  const local = hd.getHolidays(year, localLanguage).filter((h) => h.type === 'public');
  const english = hd.getHolidays(year, 'en').filter((h) => h.type === 'public');
  if (local.length !== english.length)
    throw new Error(
      `date-holidays returned ${local.length} ${localLanguage} and ${english.length} en holidays for ${year}`,
    );

  const out: DayOff[] = [];
  local.forEach((h, i) => {
    const en = english[i];
    // The two lists line up by order; check it rather than pair the wrong names silently.
    if (!en || en.date !== h.date || en.rule !== h.rule)
      throw new Error(`date-holidays ${localLanguage}/en lists differ at ${h.date} (${h.rule})`);
    const first = h.date.slice(0, 10); // the local calendar date; `start` is an instant and may fall on the day before
    const substitute = isSubstitute(h, local);
    for (let d = 0; d < spanDays(h); d++) {
      out.push({ date: addDays(first, d), local: baseName(h), english: baseName(en), substitute });
    }
  });
  return out;
}

/**
 * Flagged by date-holidays (KZ), or a fixed-date rule with an "if … then" clause whose date was moved while the
 * same rule also gives the original date: Russian data moves days off (8 March 2026 → 9 March) without flagging them.
 */
function isSubstitute(h: HolidaysTypes.Holiday, all: HolidaysTypes.Holiday[]): boolean {
  if (h.substitute) return true;
  const fixed = /^(\d\d-\d\d)\b.* then /.exec(h.rule);
  return fixed !== null && h.date.slice(5, 10) !== fixed[1] && all.some((o) => o !== h && o.rule === h.rule);
}

/** date-holidays appends " (substitute day)" to flagged substitutes; the description says it instead. */
function baseName(h: HolidaysTypes.Holiday): string {
  return h.substitute ? h.name.replace(/\s*\([^()]*\)$/, '') : h.name;
}

/** Whole calendar days covered (RU New Year holidays come as one entry of five days); rounding absorbs DST shifts. */
function spanDays(h: HolidaysTypes.Holiday): number {
  return Math.max(1, Math.round((h.end.getTime() - h.start.getTime()) / DAY_MS));
}

function addDays(isoDate: string, days: number): string {
  const [y, m, d] = isoDate.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d + days)).toISOString().slice(0, 10);
}

/** Length of the run of consecutive dates in `dates` that contains `date`. */
function runAround(dates: Set<string>, date: string): number {
  let length = 1;
  for (let d = -1; dates.has(addDays(date, d)); d--) length++;
  for (let d = 1; dates.has(addDays(date, d)); d++) length++;
  return length;
}

function describe(code: string, day: DayOff, breakDays: number): string {
  const count = String(NUMBER_WORDS[breakDays] ?? breakDays);
  const inBreak = breakDays > 0 ? `part of ${/^(8|11|18|eight)/.test(count) ? 'an' : 'a'} ${count}-day break` : '';
  if (day.substitute) return `Substitute day off for ${day.english}${inBreak ? `; ${inBreak}` : ''}.`;
  const what = DESCRIPTIONS[code]?.[day.english] ?? `Public holiday in ${supportedCountries()[code] ?? code}`;
  return `${what}; ${inBreak || 'a day off'}.`;
}
