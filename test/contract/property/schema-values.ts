// fast-check arbitraries for the values a JSON Schema (OpenAPI 3.1) accepts and for values it refuses. Whether a
// value is valid is decided by ajv with the options the server validates requests with (JSON Schema 2020-12,
// formats, type coercion), so "valid" and "invalid" here mean what they mean to the service.
import fc from 'fast-check';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { addServiceFormats } from '../../../server/contract/formats.ts';

const ajv = new Ajv2020({ strict: false, coerceTypes: true, allErrors: false, validateFormats: true });
addServiceFormats(ajv);

export type Schema = Record<string, any>;

/** Does the schema accept the value? (Checked on a copy: coercion rewrites what it validates.) */
export function accepts(schema: Schema, value: unknown): boolean {
  let validate = compiled.get(schema);
  if (!validate) compiled.set(schema, (validate = ajv.compile(schema)));
  return validate(structuredClone(value)) as boolean;
}
const compiled = new WeakMap<Schema, ReturnType<typeof ajv.compile>>();

/**
 * Values the schema accepts. One arbitrary per schema object for the process, as for `matching` below: every test of an
 * operation (valid, invalid, without credentials) and every file asks for the same schemas' values again.
 */
export function validValue(schema: Schema): fc.Arbitrary<unknown> {
  let arbitrary = validValues.get(schema);
  if (!arbitrary) validValues.set(schema, (arbitrary = generate(schema).filter((v) => accepts(schema, v))));
  return arbitrary;
}
const validValues = new WeakMap<Schema, fc.Arbitrary<unknown>>();

/** Values the schema refuses: wrong types, out of range, off-pattern, off-enum, missing or mistyped fields. */
export function invalidValue(schema: Schema): fc.Arbitrary<unknown> {
  let arbitrary = invalidValues.get(schema);
  if (!arbitrary) invalidValues.set(schema, (arbitrary = refused(schema)));
  return arbitrary;
}
const invalidValues = new WeakMap<Schema, fc.Arbitrary<unknown>>();

function refused(schema: Schema): fc.Arbitrary<unknown> {
  const candidates: fc.Arbitrary<unknown>[] = [
    fc.string({ maxLength: 12 }),
    matching(/^[a-z]{1,8}$/),
    fc.constant(''),
    fc.integer({ min: -1_000_000, max: 1_000_000 }),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(fc.integer(), { maxLength: 3 }),
    fc.dictionary(matching(/^[a-z]{1,5}$/), fc.integer(), { maxKeys: 3 }),
  ];
  if (typeof schema.maximum === 'number')
    candidates.push(fc.integer({ min: 1, max: 1000 }).map((d) => schema.maximum + d));
  if (typeof schema.minimum === 'number')
    candidates.push(fc.integer({ min: 1, max: 1000 }).map((d) => schema.minimum - d));
  if (typeof schema.maxLength === 'number') candidates.push(fc.constant('x'.repeat(schema.maxLength + 1)));
  if (schema.type === 'object' && schema.properties) {
    // A valid object with one field broken or one required field left out.
    const broken = Object.entries(schema.properties as Record<string, Schema>).map(([name, sub]) =>
      fc.tuple(validValue(schema), invalidValue(sub)).map(([object, bad]) => ({ ...(object as object), [name]: bad })),
    );
    const missing = ((schema.required ?? []) as string[]).map((name) =>
      validValue(schema).map((object) =>
        Object.fromEntries(Object.entries(object as object).filter(([key]) => key !== name)),
      ),
    );
    candidates.push(...broken, ...missing);
  }
  return fc.oneof(...candidates).filter((v) => !accepts(schema, v));
}

/** Values shaped by the schema; `validValue` filters out the few that miss a constraint this does not model. */
function generate(schema: Schema): fc.Arbitrary<unknown> {
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  if (schema.allOf) return generate([...schema.allOf, schema].map(mergeable).reduce(merge, {}));
  const alternatives = schema.oneOf ?? schema.anyOf;
  if (alternatives) return fc.oneof(...alternatives.map((s: Schema) => generate({ ...mergeable(schema), ...s })));
  if (Array.isArray(schema.type)) return fc.oneof(...schema.type.map((type: string) => generate({ ...schema, type })));
  switch (schema.type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return fc.integer({
        min: bound(schema.minimum, schema.exclusiveMinimum, 1, -1e6),
        max: bound(schema.maximum, schema.exclusiveMaximum, -1, 1e6),
      });
    case 'number':
      return fc.double({
        noNaN: true,
        noDefaultInfinity: true,
        min: schema.minimum ?? -1e6,
        max: schema.maximum ?? 1e6,
      });
    case 'array':
      // At most 5 items, unless the schema needs more (FSRS weights: exactly 21).
      return fc.array(generate(schema.items ?? {}), {
        minLength: schema.minItems ?? 0,
        maxLength: Math.max(schema.minItems ?? 0, Math.min(schema.maxItems ?? 5, 5)),
      });
    case 'object':
      return objectOf(schema);
    case 'string':
      return stringOf(schema);
    default:
      return fc.oneof(fc.string(), fc.integer(), fc.boolean());
  }
}

function objectOf(schema: Schema): fc.Arbitrary<unknown> {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const record = Object.fromEntries(
    Object.entries(properties)
      .filter(([, s]) => !s.readOnly)
      .map(([name, s]) => [name, generate(s)]),
  );
  return fc.record(record, { requiredKeys: ((schema.required ?? []) as string[]).filter((name) => name in record) });
}

function stringOf(schema: Schema): fc.Arbitrary<string> {
  const minLength = schema.minLength ?? 0;
  const maxLength = Math.min(schema.maxLength ?? 40, 200);
  const format = FORMATS.get(schema.format);
  if (format) {
    let arbitrary = formatArbitraries.get(schema.format);
    if (!arbitrary) formatArbitraries.set(schema.format, (arbitrary = format()));
    return arbitrary;
  }
  // JSON Schema's lengths count code points, which is what Array.from splits a string into.
  if (schema.pattern)
    return matching(new RegExp(schema.pattern, 'u')).filter(
      (s) => Array.from(s).length >= minLength && Array.from(s).length <= maxLength,
    );
  return fc.string({ unit: 'grapheme', minLength, maxLength });
}

/**
 * The formats with values of their own, each arbitrary built once per process: fc.webUrl() builds its tables of
 * percent-encoded characters anew on every call (0.8 s of spec-driven.test.ts's CPU).
 */
const FORMATS = new Map<unknown, () => fc.Arbitrary<string>>([
  ['uuid', () => fc.uuid()],
  [
    'date',
    () =>
      fc
        .date({ min: new Date('1970-01-01'), max: new Date('2100-12-31'), noInvalidDate: true })
        .map((d) => d.toISOString().slice(0, 10)),
  ],
  [
    'date-time',
    () =>
      fc
        .date({ min: new Date('1970-01-01'), max: new Date('2100-12-31'), noInvalidDate: true })
        .map((d) => d.toISOString()),
  ],
  ['email', () => fc.emailAddress()],
  ['uri', () => fc.webUrl()],
]);
const formatArbitraries = new Map<unknown, fc.Arbitrary<string>>();

/**
 * The strings a regular expression matches, one arbitrary per expression for the whole process. fast-check builds one
 * from the expression's syntax tree, a few milliseconds each ({1,8} and the like the most), and the tests asked for
 * the same few expressions for every schema, operation and test, most of the file's CPU; an arbitrary holds no state
 * (what it draws comes from the run's random source), so the one built first serves every later caller alike.
 */
function matching(regex: RegExp): fc.Arbitrary<string> {
  const key = `${regex.flags}/${regex.source}`;
  let arbitrary = matchingArbitraries.get(key);
  if (!arbitrary) matchingArbitraries.set(key, (arbitrary = fc.stringMatching(regex)));
  return arbitrary;
}
const matchingArbitraries = new Map<string, fc.Arbitrary<string>>();

function bound(inclusive: number | undefined, exclusive: number | undefined, step: number, fallback: number): number {
  if (typeof exclusive === 'number') return exclusive + step;
  return inclusive ?? fallback;
}

/** Two schemas that must both hold, as one (properties and required lists joined, other keywords overlaid). */
function merge(a: Schema, b: Schema): Schema {
  const merged: Schema = { ...a, ...b };
  if (a.properties || b.properties) merged.properties = { ...a.properties, ...b.properties };
  if (a.required || b.required) merged.required = [...new Set([...(a.required ?? []), ...(b.required ?? [])])];
  return merged;
}

/** The keywords of a schema that its allOf/oneOf members add to (annotations and compositions left out). */
function mergeable(schema: Schema): Schema {
  const { allOf: _a, oneOf: _o, anyOf: _n, description: _d, examples: _e, example: _x, ...rest } = schema;
  return rest;
}
