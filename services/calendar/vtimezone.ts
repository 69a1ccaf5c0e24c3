// A VTIMEZONE (RFC 5545 §3.6.5) for a time zone, written from the same time-zone data the service computes due times
// with (luxon on Node's ICU), so a calendar app places every event where the API says it is. Packaged VTIMEZONE
// tables lag behind the tz database (one in use here still had Asia/Almaty at +06 after its 2024 move to +05):
// the offsets between `from` and `to` are read from the running process instead, one observance per transition.
import { DateTime } from 'luxon';

/** Transitions are months apart in practice; a week's step cannot step over two of them. */
const STEP_MS = 7 * 86_400_000;
const MINUTE_MS = 60_000;

/** The VTIMEZONE of `zone` with every offset transition between `from` and `to`, as CRLF-separated lines. */
export function vtimezone(zone: string, from: Date, to: Date): string {
  const offsetAt = (ms: number) => DateTime.fromMillis(ms, { zone }).offset;
  const start = Math.floor(from.getTime() / MINUTE_MS) * MINUTE_MS;
  const observances = [observance(zone, start, offsetAt(start), offsetAt(start))];
  for (let before = start, offset = offsetAt(start); before < to.getTime(); before += STEP_MS) {
    const after = Math.min(before + STEP_MS, to.getTime());
    const next = offsetAt(after);
    if (next === offset) continue;
    observances.push(observance(zone, transitionBetween(before, after, offset, offsetAt), offset, next));
    offset = next;
  }
  return ['BEGIN:VTIMEZONE', `TZID:${zone}`, ...observances.flat(), 'END:VTIMEZONE'].join('\r\n');
}

/** The first minute in (low, high] whose offset differs from `offset` (`high`'s does). */
function transitionBetween(low: number, high: number, offset: number, offsetAt: (ms: number) => number): number {
  while (high - low > MINUTE_MS) {
    const middle = low + Math.floor((high - low) / 2 / MINUTE_MS) * MINUTE_MS;
    if (offsetAt(middle) === offset) low = middle;
    else high = middle;
  }
  return high;
}

/** One STANDARD or DAYLIGHT observance starting at `at`; its DTSTART is local time in the offset it replaces. */
function observance(zone: string, at: number, offsetFrom: number, offsetTo: number): string[] {
  const local = DateTime.fromMillis(at + offsetFrom * MINUTE_MS, { zone: 'UTC' }).toFormat("yyyyMMdd'T'HHmmss");
  const zoned = DateTime.fromMillis(at, { zone });
  const kind = zoned.isInDST ? 'DAYLIGHT' : 'STANDARD';
  return [
    `BEGIN:${kind}`,
    `DTSTART:${local}`,
    `TZOFFSETFROM:${utcOffset(offsetFrom)}`,
    `TZOFFSETTO:${utcOffset(offsetTo)}`,
    ...(zoned.offsetNameShort ? [`TZNAME:${zoned.offsetNameShort}`] : []),
    `END:${kind}`,
  ];
}

/** An RFC 5545 UTC-OFFSET: +HHMM or -HHMM. */
function utcOffset(minutes: number): string {
  const sign = minutes < 0 ? '-' : '+';
  const absolute = Math.abs(minutes);
  return `${sign}${String(Math.floor(absolute / 60)).padStart(2, '0')}${String(absolute % 60).padStart(2, '0')}`;
}
