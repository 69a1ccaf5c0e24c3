// The hostile corpus: values that broke or could break a service that trusts its parsers, for a body (as JSON
// text) or for a parameter (as the already percent-encoded text that goes on the wire).

/** JSON texts put where a body value (or the whole body) goes. */
export const HOSTILE_JSON: readonly string[] = [
  // text PostgreSQL refuses or alters
  ...['\u0000', 'a\u0000b', '\ud800', 'x\udfff', '\udbff\udfff', '\u202e\u0000'].map((s) => JSON.stringify(s)),
  // dates at and past the ends of the range, leap seconds, impossible days
  ...[
    '2026-12-31T23:59:60Z',
    '0000-01-01T00:00:00Z',
    '0001-01-01T00:00:00Z',
    '0001-01-01T00:00:00+01:00',
    '9999-12-31T23:59:59.999Z',
    '9999-12-31T23:00:00-05:00',
    '10000-01-01T00:00:00Z',
    '+010000-01-01T00:00:00.000Z',
    '-000001-01-01T00:00:00Z',
    '0000-01-01',
    '0001-01-01',
    '9999-12-31',
    '2026-02-30',
    '2026-W54',
    '0000-W01',
    '9999-W52',
  ].map((s) => JSON.stringify(s)),
  // names that mean something to JavaScript objects
  ...['__proto__', 'constructor', 'prototype', 'toString'].map((s) => JSON.stringify(s)),
  // numbers at the ends of what JSON and JavaScript hold
  '1e308',
  '-1e308',
  '1e309',
  '9007199254740993',
  '-9007199254740993',
  '2147483648',
  '-2147483649',
  '5e-324',
  '-0',
  '0.1',
  '1.5',
  '-1',
  // structures: prototype keys, deep nesting, long text
  '{"__proto__":{"polluted":true}}',
  '{"constructor":{"prototype":{"polluted":true}}}',
  '['.repeat(3000) + ']'.repeat(3000),
  '{"a":'.repeat(3000) + '1' + '}'.repeat(3000),
  JSON.stringify('x'.repeat(20_000)),
  JSON.stringify('😀'.repeat(2000)),
  'null',
  'true',
  '[]',
  '{}',
];

/** Percent-encoded texts put where a path, query or form parameter goes. */
export const HOSTILE_WIRE: readonly string[] = [
  '%00',
  'a%00b',
  '%ED%A0%80',
  '%FF',
  '%C0%80',
  '%',
  '%E0%A4%A',
  '%25',
  '2026-12-31T23%3A59%3A60Z',
  '0000-01-01T00%3A00%3A00Z',
  '9999-12-31T23%3A00%3A00-05%3A00',
  '%2B010000-01-01T00%3A00%3A00Z',
  '0000-01-01',
  '9999-12-31',
  '2026-02-30',
  '2026-W54',
  '0000-W01',
  '9999-W52',
  '9999-W53',
  '__proto__',
  'constructor',
  '__proto__%5Bpolluted%5D',
  '1e308',
  '-1e308',
  '9007199254740993',
  '-1',
  '0',
  '1.5',
  'NaN',
  'Infinity',
  'x'.repeat(5000),
  '%F0%9F%98%80'.repeat(200),
];

/** Header values: the wire text a client can send at all (visible ASCII), hostile otherwise. */
export const HOSTILE_HEADER: readonly string[] = HOSTILE_WIRE.filter(
  (v) => /^[\x21-\x7e]+$/.test(v) && v.length < 1000,
);
