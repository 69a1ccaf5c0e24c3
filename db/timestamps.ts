// timestamptz values as PostgreSQL sends them in text, parsed into Dates that keep their ISO 8601 form. Every API
// body turns stored timestamps back into strings (`toISOString()`), so a list of 20 tasks parsed 60 timestamps with
// pg's parser (postgres-date: a regular expression and a Date built from its parts) and formatted them again, a fifth
// of such a request's CPU on PostgreSQL. A session in UTC sends one fixed form, which is cut here
// into the ISO string directly; the Date keeps it for its toISOString() (and so for JSON). Any other form (another
// session time zone, BC years, infinity) goes to pg's own parser.
import pg from 'pg';

const TIMESTAMPTZ = 1184;
const parseAnyTimestamp = pg.types.getTypeParser(TIMESTAMPTZ) as (text: string) => Date;

/** `YYYY-MM-DD HH:MM:SS[.f…]+00`, years 1000–9999: what PostgreSQL sends for a timestamptz in a UTC session. */
const UTC_TEXT = /^[1-9]\d{3}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{1,6})?\+00$/;

/** A Date read from the database, which answers toISOString() with the string made at parsing while it is unchanged. */
export class StoredTimestamp extends Date {
  readonly #iso: string;
  readonly #time: number;

  constructor(time: number, iso: string) {
    super(time);
    this.#time = time;
    this.#iso = iso;
  }

  override toISOString(): string {
    // A setter called since (setUTCHours…) changed the time: the kept string no longer says it.
    return this.getTime() === this.#time ? this.#iso : super.toISOString();
  }
}

export function parseTimestamp(text: string): Date {
  if (!UTC_TEXT.test(text)) return parseAnyTimestamp(text);
  // Milliseconds: the first three digits of the fraction (a Date holds no finer), as postgres-date reads them.
  const fraction = text.length === 22 ? '000' : (text.slice(20, -3) + '00').slice(0, 3);
  const time = Date.UTC(
    digits(text, 0, 4),
    digits(text, 5, 2) - 1,
    digits(text, 8, 2),
    digits(text, 11, 2),
    digits(text, 14, 2),
    digits(text, 17, 2),
    digits(fraction, 0, 3),
  );
  return new StoredTimestamp(time, `${text.slice(0, 10)}T${text.slice(11, 19)}.${fraction}Z`);
}

function digits(text: string, at: number, length: number): number {
  let value = 0;
  for (let i = at; i < at + length; i++) value = value * 10 + text.charCodeAt(i) - 48;
  return value;
}
