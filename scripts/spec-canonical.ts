// Equivalent ways of writing one schema, made one before the lock diffs two specs. api-smart-diff compares the
// documents' shapes, so naming a schema that was inline, or writing a nullable object the way generators prefer,
// would read as fields removed and variants added, although every document valid before is valid after and the
// reverse. Each rewrite here keeps exactly the same set of valid documents:
// - an event schema of `x-sse-events` that is a `$ref` to a component is that component (api-smart-diff follows no
//   `$ref` inside an extension);
// - a variant of `oneOf`/`anyOf` that is a `$ref` to a component is that component (api-smart-diff pairs variants
//   wrongly once named variants carry descriptions of their own);
// - a nullable object is written one way, `type: [object, 'null']` with its keywords: `oneOf: [object, {type: 'null'}]`
//   and a `$ref` to a component with `type: [object, 'null']` are rewritten to it.

type Schema = Record<string, unknown>;
const COMPONENT = /^#\/components\/schemas\/(.+)$/;

export function canonicalSpec(spec: any): any {
  const copy = structuredClone(spec);
  const components: Record<string, Schema> = copy.components?.schemas ?? {};
  /** The component a bare `{ $ref }` names, if the name is not being expanded already (a schema may contain itself). */
  const target = (node: unknown, expanding: Set<string>): [string, Schema] | undefined => {
    if (!isSchema(node) || Object.keys(node).length !== 1 || typeof node.$ref !== 'string') return undefined;
    const name = COMPONENT.exec(node.$ref)?.[1];
    return name && components[name] && !expanding.has(name) ? [name, components[name]!] : undefined;
  };
  const expanded = (name: string, schema: Schema, expanding: Set<string>): Schema =>
    rewrite(structuredClone(schema), new Set([...expanding, name]));

  function rewrite(node: Schema, expanding: Set<string>): Schema {
    for (const key of ['oneOf', 'anyOf'] as const) {
      const variants = node[key];
      if (!Array.isArray(variants)) continue;
      node[key] = variants.map((variant) => {
        const named = target(variant, expanding);
        return named ? expanded(...named, expanding) : variant;
      });
    }
    const nullable = nullableObject(node);
    if (nullable) return rewrite(nullable, expanding);
    const named = target(node, expanding);
    if (named && isNullableObjectType(named[1].type)) return expanded(...named, expanding);
    for (const [key, value] of Object.entries(node)) {
      if (key === 'x-sse-events' && isSchema(value)) {
        for (const [event, schema] of Object.entries(value)) {
          const eventComponent = target(schema, expanding);
          if (eventComponent) value[event] = expanded(...eventComponent, expanding);
        }
      }
      if (Array.isArray(value)) node[key] = value.map((item) => (isSchema(item) ? rewrite(item, expanding) : item));
      else if (isSchema(value)) node[key] = rewrite(value, expanding);
    }
    return node;
  }

  // The components first: api-smart-diff follows the paths' `$ref`s into them.
  for (const [name, schema] of Object.entries(components))
    if (isSchema(schema)) components[name] = rewrite(schema, new Set([name]));
  for (const section of ['paths', 'webhooks'] as const)
    if (isSchema(copy[section])) copy[section] = rewrite(copy[section], new Set());
  return copy;
}

/** `{ oneOf: [S, { type: 'null' }], …rest }` with S an object schema (either order) as `{ …S, type: [object, null], …rest }`. */
function nullableObject(node: Schema): Schema | undefined {
  const variants = node.oneOf ?? node.anyOf;
  if (!Array.isArray(variants) || variants.length !== 2) return undefined;
  const nullAt = variants.findIndex((v) => isSchema(v) && Object.keys(v).length === 1 && v.type === 'null');
  const object = variants[1 - nullAt];
  if (nullAt < 0 || !isSchema(object) || object.type !== 'object') return undefined;
  const { oneOf: _oneOf, anyOf: _anyOf, ...rest } = node;
  return { ...object, type: ['object', 'null'], ...rest };
}

function isNullableObjectType(type: unknown): boolean {
  return Array.isArray(type) && type.length === 2 && type.includes('object') && type.includes('null');
}

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
