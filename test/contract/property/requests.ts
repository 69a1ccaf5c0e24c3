// Requests generated from a bundled spec: for each operation, its path, query and header parameters and its JSON
// request body, as valid requests and as requests with exactly one input broken.
import fc from 'fast-check';
import { accepts, invalidValue, validValue, type Schema } from './schema-values.ts';

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
type Method = (typeof METHODS)[number];

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema: Schema;
}

export interface OperationUnderTest {
  operationId: string;
  method: Method;
  pathTemplate: string;
  parameters: Parameter[];
  body?: { schema: Schema; required: boolean };
  /** Whether the operation needs credentials (no anonymous alternative in its security requirements). */
  secured: boolean;
}

export interface GeneratedRequest {
  method: Method;
  url: string;
  headers: Record<string, string>;
  body?: unknown;
  /** For an invalid request, which input is broken and how. */
  broken?: string;
}

/** Every operation of a bundled spec, its local $refs resolved. */
export function operationsOf(spec: any): OperationUnderTest[] {
  const resolve = (node: any): any => resolveRefs(spec, node);
  return Object.entries(spec.paths as Record<string, any>).flatMap(([pathTemplate, item]) =>
    METHODS.filter((method) => item[method]).map((method) => {
      const operation = item[method];
      const parameters = [...(item.parameters ?? []), ...(operation.parameters ?? [])].map(resolve) as Parameter[];
      const json = resolve(operation.requestBody)?.content?.['application/json'];
      const security = (operation.security ?? spec.security ?? []) as object[];
      return {
        operationId: operation.operationId,
        method,
        pathTemplate,
        parameters: parameters.filter((p) => p.in !== 'cookie'),
        ...(json
          ? { body: { schema: json.schema ?? {}, required: Boolean(resolve(operation.requestBody).required) } }
          : {}),
        secured: security.length > 0 && security.every((requirement) => Object.keys(requirement).length > 0),
      };
    }),
  );
}

export type Inputs = { params: Map<Parameter, unknown>; body: unknown };

/** Valid requests: every required input present and valid, optional ones sometimes. */
export function validRequest(op: OperationUnderTest): fc.Arbitrary<GeneratedRequest> {
  return validInputs(op).map((inputs) => toRequest(op, inputs));
}

/** Requests with one input broken (invalid value, or a required one left out); undefined if the operation takes none. */
export function invalidRequest(op: OperationUnderTest): fc.Arbitrary<GeneratedRequest> | undefined {
  const breakers: fc.Arbitrary<GeneratedRequest>[] = [];
  for (const parameter of op.parameters) {
    const where = `${parameter.in} parameter ${parameter.name}`;
    breakers.push(
      fc
        .tuple(validInputs(op), judgedOnTheWire(parameter, invalidValue(parameter.schema), false))
        .map(([inputs, bad]) => {
          inputs.params.set(parameter, bad);
          return { ...toRequest(op, inputs), broken: `${where} = ${JSON.stringify(bad)}` };
        }),
    );
    if (parameter.required && parameter.in !== 'path') {
      breakers.push(
        validInputs(op).map(
          (inputs) => (inputs.params.delete(parameter), { ...toRequest(op, inputs), broken: `${where} missing` }),
        ),
      );
    }
  }
  if (op.body) {
    breakers.push(
      fc.tuple(validInputs(op), invalidValue(op.body.schema)).map(([inputs, bad]) => ({
        ...toRequest(op, { ...inputs, body: bad }),
        broken: `body = ${JSON.stringify(bad)}`,
      })),
    );
  }
  return breakers.length > 0 ? fc.oneof(...breakers).filter(reachesOperation) : undefined;
}

export function validInputs(op: OperationUnderTest): fc.Arbitrary<Inputs> {
  const params = op.parameters.map((p) => {
    const value = judgedOnTheWire(p, validValue(p.schema), true);
    return p.required || p.in === 'path'
      ? value.map((v) => [p, v] as const)
      : fc.option(
          value.map((v) => [p, v] as const),
          { nil: undefined },
        );
  });
  const body = op.body
    ? op.body.required
      ? validValue(op.body.schema)
      : fc.option(validValue(op.body.schema), { nil: undefined })
    : fc.constant(undefined);
  return fc.tuple(fc.tuple(...params), body).map(([pairs, bodyValue]) => ({
    params: new Map(pairs.filter((pair): pair is readonly [Parameter, unknown] => pair !== undefined)),
    body: bodyValue,
  }));
}

/**
 * A parameter reaches the server as text, so whether a value is (in)valid is judged on that text: `null` sent as
 * "null" is a fine string. Header values must also be visible ASCII to be sent at all.
 */
function judgedOnTheWire(parameter: Parameter, values: fc.Arbitrary<unknown>, valid: boolean): fc.Arbitrary<unknown> {
  return values.filter(
    // A list parameter's array is judged item by item, each as its text; any other parameter's value as the one text
    // it goes out as (an array in a header is the string "[]" or "a,b").
    (v) =>
      accepts(parameter.schema, isListParameter(parameter) && Array.isArray(v) ? v.map(onTheWire) : onTheWire(v)) ===
        valid &&
      (parameter.in !== 'header' || /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/.test(onTheWire(v))),
  );
}

export function toRequest(op: OperationUnderTest, { params, body }: Inputs): GeneratedRequest {
  let url = op.pathTemplate;
  const query = new URLSearchParams();
  const headers: Record<string, string> = {};
  for (const parameter of op.parameters) {
    if (!params.has(parameter)) continue;
    const value = params.get(parameter);
    if (parameter.in === 'path') url = url.replace(`{${parameter.name}}`, encodeURIComponent(onTheWire(value)));
    else if (parameter.in === 'header') headers[parameter.name] = onTheWire(value);
    else
      for (const item of Array.isArray(value) && parameter.schema.type === 'array' ? value : [value])
        query.append(parameter.name, onTheWire(item));
  }
  const search = query.toString();
  return {
    method: op.method,
    url: search ? `${url}?${search}` : url,
    headers,
    ...(body !== undefined ? { body } : {}),
  };
}

/** A parameter value as text (a broken value may be an object, sent as its JSON). */
function onTheWire(value: unknown): string {
  return typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value);
}

/** Whether the request still reaches its operation: an empty path parameter leaves an empty segment, another route. */
export function reachesOperation(request: GeneratedRequest): boolean {
  return !/\/\/|\/(\?|$)/.test(request.url);
}

/**
 * Whether the request gets as far as authentication: it reaches its operation, and its body (if any) is a JSON
 * object or array, since the JSON parser refuses any other body (400) before routing.
 */
export function reachesAuthentication(request: GeneratedRequest): boolean {
  return (
    reachesOperation(request) &&
    (request.body === undefined || (typeof request.body === 'object' && request.body !== null))
  );
}

function resolveRefs(spec: any, node: any, seen = new Set<string>()): any {
  if (Array.isArray(node)) return node.map((item) => resolveRefs(spec, item, seen));
  if (!node || typeof node !== 'object') return node;
  if (typeof node.$ref === 'string') {
    if (seen.has(node.$ref)) return {}; // a recursive schema: stop one level down (any value)
    const target = node.$ref
      .slice(2)
      .split('/')
      .reduce((at: any, key: string) => at?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], spec);
    return resolveRefs(spec, target, new Set([...seen, node.$ref]));
  }
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, resolveRefs(spec, value, seen)]));
}

function isListParameter(parameter: Parameter): boolean {
  const type = (parameter.schema as { type?: unknown } | undefined)?.type;
  return type === 'array' || (Array.isArray(type) && type.includes('array'));
}
