// KeptWalks (domain/recurrence.ts): a series' walk through a week kept for the next view. A view with kept walks must
// show what a view without them shows and charge the same units, whatever its budget, and a change to anything the
// walk depends on must walk again.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { arbitraryRule } from '../support/arbitrary-rules.ts';
import { KeptWalks, RangeProjection, WEEK_PROJECTED_MAX, WEEK_PROJECTION_BUDGET } from '../../domain/recurrence.ts';

const DAY_MS = 86_400_000;
const at = (iso: string) => new Date(iso);
const iso = (dates: Date[]) => dates.map((d) => d.toISOString());

interface Series {
  rule: string;
  start: Date;
  after: Date;
}

/** Each series' dates and the units spent after it, projected in order in one range under one budget. */
function view(zone: string, from: Date, series: Series[], limit: number, kept?: KeptWalks) {
  const projection = new RangeProjection(
    zone,
    from,
    new Date(from.getTime() + 7 * DAY_MS),
    limit,
    WEEK_PROJECTED_MAX,
    kept,
  );
  return series.map(({ rule, start, after }) => ({
    dates: iso(projection.occurrences(rule, start, after)),
    spent: projection.budget.spent,
  }));
}

describe('recurrence: walks kept across week views', () => {
  it('shows and charges what walking again does, whatever the budget and the order of the views', () => {
    const instant = fc.date({ min: at('2026-01-01'), max: at('2026-12-31'), noInvalidDate: true });
    const series = fc.record({
      rule: fc.oneof(arbitraryRule, fc.constant('FREQ=DAILY;BYWEEKNO=1;COUNT=9999'), fc.constant('NOT A RULE')),
      start: instant,
      afterDays: fc.integer({ min: 0, max: 400 }),
    });
    fc.assert(
      fc.property(
        fc.constantFrom('UTC', 'Europe/Berlin', 'Asia/Almaty', 'America/New_York', 'Australia/Lord_Howe'),
        fc.array(series, { minLength: 1, maxLength: 4 }),
        fc.integer({ min: -10, max: 500 }),
        // Budgets from one that cuts the first walk to the week view's own.
        fc.array(fc.constantFrom(500, 1_500, 4_000, 20_000, WEEK_PROJECTION_BUDGET), { minLength: 2, maxLength: 4 }),
        (zone, picked, fromDays, limits) => {
          const list = picked.map(({ rule, start, afterDays }) => ({
            rule,
            start,
            after: new Date(start.getTime() + afterDays * DAY_MS),
          }));
          const from = new Date(list[0]!.after.getTime() + fromDays * DAY_MS);
          const kept = new KeptWalks();
          // The same views in turn under different budgets: the kept walks are made by one and used by the next.
          for (const limit of limits) {
            assert.deepEqual(view(zone, from, list, limit, kept), view(zone, from, list, limit), `budget ${limit}`);
          }
        },
      ),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 200), seed: Number(process.env.PROPERTY_SEED ?? 20261207) },
    );
  });

  it('walks again when a series changes: its rule, its start, its open occurrence, the zone, the week', () => {
    const kept = new KeptWalks();
    const monday = at('2026-11-30T00:00:00Z');
    const start = at('2026-11-02T09:00:00Z');
    const shown = (rule: string, seriesStart = start, after = start, zone = 'UTC', from = monday) =>
      view(zone, from, [{ rule, start: seriesStart, after }], WEEK_PROJECTION_BUDGET, kept)[0]!.dates;
    assert.deepEqual(shown('FREQ=WEEKLY;BYDAY=MO,TH'), ['2026-11-30T09:00:00.000Z', '2026-12-03T09:00:00.000Z']);
    assert.equal(kept.size, 1);
    assert.deepEqual(shown('FREQ=WEEKLY;BYDAY=MO,TH'), ['2026-11-30T09:00:00.000Z', '2026-12-03T09:00:00.000Z']);
    assert.equal(kept.size, 1, 'the same series in the same week: its kept walk');
    assert.deepEqual(shown('FREQ=WEEKLY;BYDAY=TU'), ['2026-12-01T09:00:00.000Z']);
    const later = at('2026-11-02T17:30:00Z');
    assert.deepEqual(shown('FREQ=WEEKLY;BYDAY=MO,TH', later, later), [
      '2026-11-30T17:30:00.000Z',
      '2026-12-03T17:30:00.000Z',
    ]);
    // The open occurrence moved into the week: Monday is a real task now.
    const monday9 = at('2026-11-30T09:00:00Z');
    assert.deepEqual(shown('FREQ=WEEKLY;BYDAY=MO,TH', start, monday9), ['2026-12-03T09:00:00.000Z']);
    assert.deepEqual(shown('FREQ=WEEKLY;BYDAY=MO,TH', start, start, 'Asia/Almaty'), [
      '2026-11-30T09:00:00.000Z',
      '2026-12-03T09:00:00.000Z',
    ]);
    assert.deepEqual(shown('FREQ=WEEKLY;BYDAY=MO,TH', start, start, 'UTC', new Date(monday.getTime() + 7 * DAY_MS)), [
      '2026-12-07T09:00:00.000Z',
      '2026-12-10T09:00:00.000Z',
    ]);
    assert.equal(kept.size, 6);
  });

  it('keeps at most its bounds, the least recently used going first', () => {
    const kept = new KeptWalks(3, 10);
    const walk = (n: number) => ({ floating: Array.from({ length: n }, (_, i) => i), units: n, needs: n });
    kept.set('a', walk(2));
    kept.set('b', walk(2));
    kept.set('c', walk(2));
    assert.ok(kept.get('a'), 'a used: b is now the oldest');
    kept.set('d', walk(2));
    assert.equal(kept.size, 3);
    assert.equal(kept.get('b'), undefined);
    kept.set('e', walk(6)); // c, a, d hold 6 dates: 12 with e's, past 10, so c, the oldest, goes
    assert.deepEqual(
      ['a', 'c', 'd', 'e'].map((key) => kept.get(key) !== undefined),
      [true, false, true, true],
    );
    kept.set('f', walk(11));
    assert.equal(kept.get('f'), undefined, 'a walk larger than the bound is not kept');
  });
});
