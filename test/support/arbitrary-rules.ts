// Recurrence rules as fast-check draws them for the projection's property tests: every frequency with the BY parts
// that multiply or cut its occurrences, and COUNT or UNTIL, never both (RFC 5545 forbids it).
import fc from 'fast-check';

/** A rule's text, as a series stores it. */
export const arbitraryRule: fc.Arbitrary<string> = fc
  .record(
    {
      FREQ: fc.constantFrom('DAILY', 'WEEKLY', 'MONTHLY', 'YEARLY'),
      INTERVAL: fc.integer({ min: 1, max: 3 }).map(String),
      BYDAY: fc.subarray(['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'], { minLength: 1 }).map((d) => d.join(',')),
      BYMONTHDAY: fc.subarray([1, 2, 15, 28, -1], { minLength: 1 }).map((d) => d.join(',')),
      BYHOUR: fc.subarray([0, 2, 9, 23], { minLength: 1 }).map((d) => d.join(',')),
      BYMINUTE: fc.subarray([0, 30, 59], { minLength: 1 }).map((d) => d.join(',')),
      BYSETPOS: fc.constantFrom('1', '-1', '2'),
      COUNT: fc.integer({ min: 1, max: 400 }).map(String),
      UNTIL: fc.constantFrom('20270315', '20280101T120000Z'),
    },
    { requiredKeys: ['FREQ'] },
  )
  .map((record) => {
    if (record.COUNT && record.UNTIL) delete record.UNTIL;
    return Object.entries(record)
      .map(([k, v]) => `${k}=${v}`)
      .join(';');
  });
