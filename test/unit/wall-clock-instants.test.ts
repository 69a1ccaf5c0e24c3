// fromFloating (domain/recurrence.ts): a wall-clock time turned into an instant of a zone without building a luxon
// DateTime per occurrence, held to luxon's own answer where the answer is hard: around the zones' offset transitions
// (spring gaps, autumn folds, half-hour and 45-minute offsets, a change at midnight, a day skipped, a zone's standard
// offset moved, local mean time's second offsets), asked at times of the year when the zone's offset differs (luxon
// resolves a wall-clock time that occurs twice by the zone's offset at the moment of asking).
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DateTime, Info, Settings } from 'luxon';
import { wallClock } from '../../domain/recurrence.ts';

const ZONES = [
  'Europe/Berlin',
  'America/New_York',
  'Australia/Lord_Howe', // a 30-minute DST
  'America/Santiago', // changes at midnight
  'Europe/Dublin', // tzdata's negative DST
  'Africa/Casablanca', // DST suspended for Ramadan: four changes a year
  'Pacific/Apia', // skipped 30 December 2011
  'Asia/Almaty', // moved from +06 to +05 in 2024
  'Pacific/Chatham', // +12:45 and +13:45
  'America/St_Johns', // -03:30
  'Asia/Kolkata', // local mean time, +05:53:28
  'UTC',
];

/** The instants at which a zone's offset changes within [from, to): weekly steps, then bisected to the millisecond. */
function transitions(zone: string, from: number, to: number, step = 7 * 86_400_000): number[] {
  const z = Info.normalizeZone(zone);
  const found: number[] = [];
  for (let t = from; t < to; t += step) {
    if (z.offset(t) === z.offset(t + step)) continue;
    let [lo, hi] = [t, t + step];
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (z.offset(mid) === z.offset(lo)) lo = mid;
      else hi = mid;
    }
    found.push(hi);
  }
  return found;
}

const utc = (iso: string) => Date.parse(iso);
/** Windows to look for transitions in: local mean time's end, the 1970s, 2011 (Apia), today's rules. */
const WINDOWS: Array<[number, number]> = [
  [utc('1879-01-01T00:00:00Z'), utc('1925-01-01T00:00:00Z')],
  [utc('1968-01-01T00:00:00Z'), utc('1975-01-01T00:00:00Z')],
  [utc('2010-06-01T00:00:00Z'), utc('2012-06-01T00:00:00Z')],
  [utc('2023-01-01T00:00:00Z'), utc('2028-01-01T00:00:00Z')],
];

const EDGES = ZONES.flatMap((zone) =>
  WINDOWS.flatMap(([from, to]) => transitions(zone, from, to)).map((at) => ({ zone, at })),
);

/** What luxon answers for the wall-clock time `local` (epoch ms of its fields written as UTC) in the zone at `now`. */
function luxonInstant(local: number, zone: string, now: number): number {
  const fields = new Date(local);
  const previous = Settings.now;
  Settings.now = () => now;
  try {
    return DateTime.fromObject(
      {
        year: fields.getUTCFullYear(),
        month: fields.getUTCMonth() + 1,
        day: fields.getUTCDate(),
        hour: fields.getUTCHours(),
        minute: fields.getUTCMinutes(),
        second: fields.getUTCSeconds(),
        millisecond: fields.getUTCMilliseconds(),
      },
      { zone },
    )
      .toJSDate()
      .getTime();
  } finally {
    Settings.now = previous;
  }
}

function ours(local: number, zone: string, now: number): number {
  const previous = Settings.now;
  Settings.now = () => now;
  try {
    return wallClock.fromFloating(new Date(local), zone).getTime();
  } finally {
    Settings.now = previous;
  }
}

/** Moments of asking: each side of today's changes, the changes themselves, and long ago (local mean time). */
const NOWS = [
  utc('2026-01-15T12:00:00Z'),
  utc('2026-07-15T12:00:00Z'),
  utc('2026-03-29T01:00:00Z'),
  utc('2026-10-25T00:59:59.999Z'),
  utc('2026-10-25T01:00:00Z'),
  utc('2024-02-29T18:00:00Z'),
  utc('2024-03-01T00:00:00Z'),
  utc('2011-12-30T10:00:00Z'),
  utc('1880-06-01T00:00:00Z'),
  utc('1971-06-01T00:00:00Z'),
];
const RUNS = Number(process.env.PROPERTY_RUNS ?? 200) * 10;
const SEED = Number(process.env.PROPERTY_SEED ?? 20261207);

describe('recurrence: a wall-clock time as an instant, as luxon finds it', () => {
  it('finds transitions to test around in every zone but UTC', () => {
    for (const zone of ZONES.filter((z) => z !== 'UTC'))
      assert.ok(
        EDGES.some((edge) => edge.zone === zone),
        zone,
      );
  });

  it('answers as luxon around every offset transition found, asked at any of several moments', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...EDGES),
        // Within three hours of the transition's wall-clock time on either side, often on the minute.
        fc.oneof(
          fc.integer({ min: -180, max: 180 }).map((minutes) => minutes * 60_000),
          fc.integer({ min: -3 * 3_600_000, max: 3 * 3_600_000 }),
        ),
        fc.oneof(
          fc.constantFrom(...NOWS),
          fc.constantFrom(...EDGES).map((edge) => edge.at),
          fc.integer({ min: utc('1850-01-01T00:00:00Z'), max: utc('2040-01-01T00:00:00Z') }),
        ),
        ({ zone, at }, delta, now) => {
          const offsets = Info.normalizeZone(zone);
          // The wall-clock times on both sides of the change, around the transition.
          for (const offset of [offsets.offset(at - 1), offsets.offset(at)]) {
            const local = Math.floor(at + offset * 60_000) + delta;
            assert.equal(ours(local, zone, now), luxonInstant(local, zone, now), `${zone} ${local} at ${now}`);
          }
        },
      ),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it('answers as luxon for any wall-clock time of the years 0001-9999, asked at any moment', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ZONES),
        fc.integer({ min: utc('0000-12-31T00:00:00Z'), max: utc('9999-12-31T23:59:59.999Z') }),
        fc.integer({ min: utc('1850-01-01T00:00:00Z'), max: utc('2100-01-01T00:00:00Z') }),
        (zone, local, now) => {
          assert.equal(ours(local, zone, now), luxonInstant(local, zone, now), `${zone} ${local} at ${now}`);
        },
      ),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it("reads the zone's offset now as luxon does, kept within a second: around transitions, to the millisecond", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...EDGES),
        fc.integer({ min: -2_500, max: 2_500 }),
        fc.integer({ min: -2_500, max: 2_500 }),
        ({ zone, at }, first, second) => {
          const offsets = Info.normalizeZone(zone);
          // Two moments asked in turn, often in the same second, on either side of the change.
          for (const now of [at + first, at + second]) {
            const previous = Settings.now;
            Settings.now = () => now;
            try {
              assert.equal(wallClock.offsetNow(zone), offsets.offset(now), `${zone} at ${now}`);
            } finally {
              Settings.now = previous;
            }
          }
        },
      ),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it('keeps an answer for its moment of asking: the same autumn hour asked in summer and in winter', () => {
    // 02:30 on 25 October 2026 occurs twice in Berlin: 00:30Z (summer time) and 01:30Z (winter time).
    const local = utc('2026-10-25T02:30:00Z');
    const summer = utc('2026-07-01T12:00:00Z');
    const winter = utc('2026-12-01T12:00:00Z');
    for (let round = 0; round < 2; round++) {
      assert.equal(new Date(ours(local, 'Europe/Berlin', summer)).toISOString(), '2026-10-25T00:30:00.000Z');
      assert.equal(new Date(ours(local, 'Europe/Berlin', winter)).toISOString(), '2026-10-25T01:30:00.000Z');
      assert.equal(luxonInstant(local, 'Europe/Berlin', summer), utc('2026-10-25T00:30:00Z'));
      assert.equal(luxonInstant(local, 'Europe/Berlin', winter), utc('2026-10-25T01:30:00Z'));
    }
  });
});
