// A surface's contract at run time: openapi-backend over the bundled spec, with ajv set up for OpenAPI 3.1
// (JSON Schema 2020-12, formats). The server routes and validates requests with it; the response check below
// is shared by VALIDATE_RESPONSES=1 and by every test, so both judge responses by the same rules.
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import { OpenAPIBackend, type Document, type Operation } from 'openapi-backend';
import { OpenAPIValidator, ValidationContext } from 'openapi-backend/validation.js';
import type { Surface } from './surfaces.ts';
import { sharedBundledSpec } from './bundled-specs.ts';
import { deepFreeze } from './deep-freeze.ts';
import { addServiceFormats } from './formats.ts';
import { matchTemplatesOnce } from './route-matching.ts';

export interface Contract {
  api: OpenAPIBackend;
  definition: Document;
  /** The operation a method and path resolve to, if any. */
  match(method: string, path: string): Operation | undefined;
  /** The methods the spec allows on a concrete path, HEAD wherever GET (empty when no path of the spec matches). */
  allowedMethods(path: string): string[];
  /**
   * What is wrong with a response of an operation: an undocumented status, a body or headers off the schema.
   * `bodiless`: the answer to a HEAD, whose headers are the GET's and whose body is absent by definition.
   */
  checkResponse(
    operation: Operation,
    response: { status: number; headers: Record<string, unknown>; body: unknown },
    options?: { bodiless?: boolean },
  ): string[];
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'trace'];

/**
 * The method a request is routed by: HEAD is served by the GET operation of its path (RFC 9110 §9.3.2: same status
 * and headers); Node's HTTP server drops the body of a response to HEAD.
 */
export function routedMethod(method: string): string {
  return method.toUpperCase() === 'HEAD' ? 'GET' : method;
}

/**
 * The contract of a surface, from its bundled spec in generated/ as the process shares it (sharedBundledSpec). One
 * document is also one dereferenced definition: openapi-backend's quick mode dereferences with dereference-json-schema,
 * which keeps its result by the input object. So that no app can change what the others read, that definition is
 * frozen too, once its first contract is built.
 */
export async function loadSurfaceContract(surface: Surface): Promise<Contract> {
  const { definition } = sharedBundledSpec(surface);
  let specText = sharedSpecTexts.get(definition);
  if (specText === undefined) {
    specText = JSON.stringify(definition);
    sharedSpecTexts.set(definition, specText);
  }
  const contract = await loadContract(definition, specText);
  if (!Object.isFrozen(contract.api.definition)) deepFreeze(contract.api.definition);
  return contract;
}
const sharedSpecTexts = new WeakMap<Document, string>();

/** `specText`: the definition as JSON.stringify writes it, when the caller has it already. */
export async function loadContract(definition: Document, specText = JSON.stringify(definition)): Promise<Contract> {
  const api = new OpenAPIBackend({
    definition,
    // The spec is linted by Redocly; openapi-backend's own definition check only knows OpenAPI 3.0.
    strict: false,
    // Validators compile on an operation's first request (~50 ms once) instead of all at start-up (~0.4 s for
    // 8 operations, growing with the spec); every operation is compiled by the test suite, so none fails late.
    quick: true,
    validate: true,
    coerceTypes: true,
    ajvOpts: { useDefaults: true, allErrors: true },
    // openapi-backend makes an Ajv for every validator it builds, up to five an operation, and Ajv compiles the JSON
    // Schema meta-schema in each to check the schemas given to it: more CPU than the validator itself, for schemas that
    // never change. The spec's schemas are checked once instead, by Redocly's lint and by
    // test/contract/spec/schemas-valid.test.ts (docs/performance.md, "The test suite's CPU", has the cost).
    customizeAjv: (_ajv, ajvOpts) => {
      const ajv = new Ajv2020({ ...ajvOpts, strict: false, validateSchema: false });
      addServiceFormats(ajv);
      return ajv as never;
    },
  });
  // In quick mode init() starts json-schema-ref-parser on the input without awaiting it and never reads what it
  // parsed (it dereferences the input itself): a parse of the whole spec per contract, for nothing.
  api.loadDocument = () => Promise.resolve(definition);
  await api.init();
  shareCompiledValidators(api, specText);
  compileResponseChecksOnUse(api);
  // openapi-backend rebuilds this list on every routed request; the definition never changes, so build it once.
  const operations = api.router.getOperations();
  api.router.getOperations = () => operations;
  matchTemplatesOnce(api);
  parseOncePerRequest(api);
  copyQueryPlainly(api);
  validateWithOperationPlan(api);

  const match = (method: string, path: string) =>
    api.router.matchOperation({ method: routedMethod(method), path, headers: {}, query: {} }) ?? undefined;
  return {
    api,
    definition,
    match,
    allowedMethods: (path) =>
      METHODS.filter((method) => match(method, path)).flatMap((m) =>
        m === 'get' ? ['GET', 'HEAD'] : [m.toUpperCase()],
      ),
    checkResponse(operation, { status, headers, body }, { bodiless = false } = {}) {
      const documented = Object.keys(operation.responses ?? {});
      if (!documented.includes(String(status))) {
        return [
          `status ${status} is not documented for ${operation.operationId} (documented: ${documented.join(', ')})`,
        ];
      }
      const failures: string[] = [];
      const bodyErrors = bodiless ? [] : (api.validator.validateResponse(body, operation, status).errors ?? []);
      for (const error of bodyErrors) failures.push(`body${error.instancePath} ${error.message}`);
      // openapi-backend's 'superset' match requires every documented header, even one with `required: false`
      // (Idempotent-Replayed); so match 'any' for the schemas and check presence by each header's `required`.
      const headerResult = api.validator.validateResponseHeaders(headers, operation, {
        statusCode: status,
        setMatchType: 'any' as never,
      });
      for (const error of headerResult.errors ?? []) failures.push(`headers${error.instancePath} ${error.message}`);
      const documentedHeaders =
        (operation.responses?.[status] as { headers?: Record<string, { required?: boolean }> } | undefined)?.headers ??
        {};
      for (const [name, header] of Object.entries(documentedHeaders)) {
        if (header.required === true && headers[name.toLowerCase()] === undefined)
          failures.push(`headers must have required property '${name.toLowerCase()}'`);
      }
      return failures;
    },
  };
}

type CompiledValidators = Pick<
  OpenAPIBackend['validator'],
  'requestValidators' | 'responseValidators' | 'statusBasedResponseValidators' | 'responseHeadersValidators'
>;
/** By the spec's text: a spec that differs by one character shares nothing. */
const compiledBySpec = new Map<string, CompiledValidators>();

/**
 * Every contract of one spec in a process fills and reads the same validators, each compiled on an operation's first
 * request (openapi-backend keeps them by operationId, built from the operation alone). A server builds one contract per
 * surface and compiles as before; the tests build an app, and so a contract, for almost every file or test, hundreds in
 * a process, and compiled the validators of the operations they called again for each.
 */
function shareCompiledValidators(api: OpenAPIBackend, specText: string): void {
  const validator = api.validator;
  const shared = compiledBySpec.get(specText);
  if (!shared) {
    compiledBySpec.set(specText, validator);
    return;
  }
  validator.requestValidators = shared.requestValidators;
  validator.responseValidators = shared.responseValidators;
  validator.statusBasedResponseValidators = shared.statusBasedResponseValidators;
  validator.responseHeadersValidators = shared.responseHeadersValidators;
}

type MatchType = 'any' | 'superset' | 'subset' | 'exact';
type Ajv = ReturnType<OpenAPIBackend['validator']['getAjv']>;
/** openapi-backend's own compile (its schema decycled, then Ajv's compile), private to its validator class. */
const compileSchema = (OpenAPIValidator as unknown as { compileSchema(ajv: Ajv, schema: object): ValidateFunction })
  .compileSchema;
/** The response checks compiled so far, by context and schema (as JSON text): one schema is one check in a process. */
const responseChecksBySchema = new Map<string, ValidateFunction>();
const responseChecksAjv = new Map<ValidationContext, Ajv>();

/**
 * A response check of `schema` as openapi-backend compiles it in `context` (the Ajv it makes for that context, here
 * one per context for the process), compiled once per schema.
 */
function sharedResponseCheck(api: OpenAPIBackend, context: ValidationContext, schema: object): ValidateFunction {
  let ajv = responseChecksAjv.get(context);
  if (!ajv) {
    ajv = api.validator.getAjv(context, context === ValidationContext.ResponseHeaders ? { coerceTypes: true } : {});
    responseChecksAjv.set(context, ajv);
  }
  let text: string;
  try {
    text = `${context} ${JSON.stringify(schema)}`;
  } catch {
    return compileSchema.call(OpenAPIValidator, ajv, schema); // a recursive schema, compiled as it is
  }
  let check = responseChecksBySchema.get(text);
  if (!check) responseChecksBySchema.set(text, (check = compileSchema.call(OpenAPIValidator, ajv, schema)));
  return check;
}

/**
 * openapi-backend compiles an operation's response checks on its first checked response: its body's schema for every
 * documented status, and its headers four ways per status (matched as `any`, `superset`, `subset` or `exact` set), each
 * operation with Ajvs of its own. checkResponse asks for one status at a time and only for `any`, and many statuses
 * share their schemas (a list's page, RateLimit, X-Request-Id): the header checks alone were most of the CPU a process
 * spent compiling the contract. Here each check is compiled when first asked for, and one schema once per process. The
 * same checks: the same schema per status (and match type), compiled (decycled) by the same Ajv set-up.
 */
function compileResponseChecksOnUse(api: OpenAPIBackend): void {
  const validator = api.validator;
  const compile = (schema: object) => sharedResponseCheck(api, ValidationContext.ResponseHeaders, schema);
  validator.buildStatusBasedResponseValidatorForOperation = (operation) => {
    if (!operation?.operationId || !operation.responses) return null;
    const byStatus: ReturnType<typeof validator.buildStatusBasedResponseValidatorForOperation> = {};
    for (const [status, response] of Object.entries(operation.responses)) {
      const content = (response as { content?: Record<string, { schema?: object }> }).content;
      const schema = content?.['application/json']?.schema
        ? content['application/json'].schema
        : !content && status === '204'
          ? {
              type: 'null',
              title: 'The root schema',
              description: 'The root schema comprises the entire JSON document.',
              default: null,
            }
          : undefined;
      if (!schema) continue;
      let check: ValidateFunction | undefined;
      Object.defineProperty(byStatus, status, {
        enumerable: true,
        get: () => (check ??= sharedResponseCheck(api, ValidationContext.Response, schema)),
      });
    }
    return byStatus;
  };
  validator.buildResponseHeadersValidatorForOperation = (operation) => {
    if (!operation?.operationId || !operation.responses) return null;
    const byStatus: ReturnType<typeof validator.buildResponseHeadersValidatorForOperation> = {};
    for (const [status, response] of Object.entries(operation.responses)) {
      const properties: Record<string, unknown> = {};
      const required: string[] = [];
      const headers = (response as { headers?: Record<string, { schema?: unknown }> }).headers ?? {};
      for (const [name, header] of Object.entries(headers)) {
        if (!header.schema) continue;
        properties[name.toLowerCase()] = header.schema;
        required.push(name.toLowerCase());
      }
      const schemaOf = (additionalProperties: boolean, requiredNames: string[]) => ({
        type: 'object',
        properties: { headers: { type: 'object', additionalProperties, properties, required: requiredNames } },
      });
      const variants: Record<MatchType, () => object> = {
        any: () => schemaOf(true, []),
        superset: () => schemaOf(true, required),
        subset: () => schemaOf(false, []),
        exact: () => schemaOf(false, required),
      };
      const checks = {} as Record<MatchType, ValidateFunction>;
      for (const [matchType, schema] of Object.entries(variants) as [MatchType, () => object][]) {
        let check: ValidateFunction | undefined;
        Object.defineProperty(checks, matchType, { enumerable: true, get: () => (check ??= compile(schema())) });
      }
      byStatus[status] = checks;
    }
    return byStatus;
  };
}

/**
 * openapi-backend parses a request four times (each a header copy, a copy of the query, a compiled path template):
 * before routing, after it, inside validation, and with the coerced values after it (each a visible share of a hot
 * read's CPU). Here the first one is a shallow view (nothing reads it: its 404/405 handlers take the
 * path from the request), and the other three are one: validation reuses the parse made after routing instead of
 * making its own, and coerces it in place, as it did its own copy; the last parse, of the coerced values, is that
 * same parse with the path parameters as the path gave them (openapi-backend's last parse takes them from the path
 * again, so handlers get strings there). The last call passes a copy of the request (validation's `coerced`): it
 * shares the request's `headers` object, which is what the parse is kept by.
 */
function parseOncePerRequest(api: OpenAPIBackend): void {
  const router = api.router;
  const parse = parseWithOperation(router);
  type Parsed = ReturnType<typeof parse>;
  const kept = new WeakMap<
    object,
    { request: object; operation: Operation; parsed: Parsed; pathParams: Parsed['params'] }
  >();
  router.parseRequest = (req, operation) => {
    if (!operation) return { ...req, params: {}, query: {}, headers: {}, cookies: {}, requestBody: req.body };
    const entry = kept.get(req.headers);
    if (entry?.operation === operation) {
      if (req === entry.request) return entry.parsed; // the parse inside validation
      if (req.query === entry.parsed.query) {
        kept.delete(req.headers); // the last parse, of validation's coerced copy of the request
        return { ...entry.parsed, params: entry.pathParams };
      }
    }
    const parsed = parse(req, operation);
    kept.set(req.headers, { request: req, operation, parsed, pathParams: { ...parsed.params } });
    return parsed;
  };
}

/**
 * openapi-backend's parse of a request routed to an operation, with what it derives from the operation alone made once
 * per operation instead of on every request: the path template's pattern and names (bath-es5 compiles both on every
 * call) and the query parameters that need decoding. The same object: the request with its path and method normalized,
 * the path parameters (percent-decoded; a bad escape throws URIError, which the edge answers with 400), the headers
 * copied under lower-case names, the cookies, the query (parseRequestQuery's copy, decoded as the operation says), the
 * body. A request with a Cookie header is left to openapi-backend's own parse (the service reads no cookie, and this
 * module imports no cookie parser).
 */
function parseWithOperation(router: OpenAPIBackend['router']): OpenAPIBackend['router']['parseRequest'] {
  const parse = router.parseRequest.bind(router);
  const plans = new WeakMap<Operation, OperationParsing>();
  return (req, operation) => {
    if (!operation || req.headers?.['cookie'] !== undefined) return parse(req, operation);
    let plan = plans.get(operation);
    if (!plan) plans.set(operation, (plan = operationParsing(operation)));
    let requestBody = req.body;
    if (req.body && typeof req.body !== 'object') {
      try {
        requestBody = JSON.parse(String(req.body));
      } catch {
        // left as it is: validation reports what the operation's schema makes of it
      }
    }
    const headers: Record<string, string | string[]> = {};
    for (const name of Object.keys(req.headers ?? {})) headers[name.toLowerCase()] = req.headers[name]!;
    const query = router.parseRequestQuery(req) as Record<string, unknown>;
    const normalized = router.normalizeRequest(req);
    const params = plan.pathParams(router.normalizePath(normalized.path)) ?? {};
    for (const name of Object.keys(query)) {
      const parameter = query[name] ? plan.decodedQuery.get(name) : undefined;
      if (parameter) decodeQueryParameter(query, name, parameter);
    }
    return { ...normalized, params, headers, query, cookies: {}, requestBody } as ReturnType<typeof parse>;
  };
}

interface QueryParameter {
  content?: Record<string, unknown>;
  explode?: boolean;
  style?: string;
}

interface OperationParsing {
  pathParams: (path: string) => Record<string, string> | null;
  /** The query parameters openapi-backend decodes beyond the query string (JSON content, non-exploded arrays). */
  decodedQuery: Map<string, QueryParameter>;
}

function operationParsing(operation: Operation): OperationParsing {
  const decodedQuery = new Map<string, QueryParameter>();
  const seen = new Set<string>();
  for (const parameter of (operation.parameters ?? []) as Array<QueryParameter & { in?: string; name?: string }>) {
    if ('$ref' in parameter || parameter.in !== 'query' || parameter.name === undefined) continue;
    if (seen.has(parameter.name)) continue; // openapi-backend reads the first parameter of a name
    seen.add(parameter.name);
    if (parameter.content?.['application/json'] || parameter.explode === false)
      decodedQuery.set(parameter.name, parameter);
  }
  return { pathParams: pathParameters(operation.path), decodedQuery };
}

/** bath-es5's `params(template)`, as openapi-backend calls it (no patterns), compiled once. */
function pathParameters(template: string): (path: string) => Record<string, string> | null {
  const names = (template.match(/\{[A-Za-z0-9_-]+\}/g) ?? []).map((name) => name.slice(1, -1));
  const pattern = new RegExp('^' + template.replace(/\{[A-Za-z0-9_-]+\}/g, '([^\\/]*)') + '$');
  return (path) => {
    const match = pattern.exec(path);
    if (match === null) return null;
    const values = match.slice(1).map((value) => decodeURIComponent(value));
    const params: Record<string, string> = {};
    for (let i = 0; i < names.length; i++) {
      const name = names[i]!;
      // A name twice in the template must match the same text twice.
      if (name in params && params[name] !== values[i]) return null;
      params[name] = values[i]!;
    }
    return params;
  };
}

/** openapi-backend's decoding of a query parameter whose value is JSON, or an array not exploded. */
function decodeQueryParameter(query: Record<string, unknown>, name: string, parameter: QueryParameter): void {
  if (parameter.content?.['application/json']) {
    const rawValue = query[name];
    if (typeof rawValue === 'string') {
      try {
        query[name] = JSON.parse(rawValue);
      } catch {
        // left raw: validation reports malformed JSON
      }
    }
    return;
  }
  const rawValue = query[name];
  if (Array.isArray(rawValue) && rawValue.length > 1) return;
  const value: unknown = Array.isArray(rawValue) ? rawValue[0] : rawValue;
  if (typeof value !== 'string') return;
  let decoded = value.replace(/%2C/g, ',');
  if (parameter.style === 'spaceDelimited') decoded = decoded.replace(/ /g, ',').replace(/%20/g, ',');
  if (parameter.style === 'pipeDelimited') decoded = decoded.replace(/\|/g, ',').replace(/%7C/g, ',');
  query[name] = decoded.split(',');
}

/**
 * openapi-backend's validation of a request against its operation, with what it looks up in the operation on every
 * request (which query parameters are arrays or JSON, which media types the body may have) found once per operation,
 * and without lodash's helpers around each step. The same result: the errors of the operation's compiled validators
 * (ajv, with types coerced and defaults filled in place), malformed JSON in a string body or a JSON query parameter,
 * and the coerced request.
 */
function validateWithOperationPlan(api: OpenAPIBackend): void {
  const validator = api.validator;
  const router = api.router;
  const validate = validator.validateRequest.bind(validator);
  const plans = new WeakMap<Operation, ValidationPlan>();
  validator.validateRequest = (req, operation) => {
    if (typeof operation !== 'object' || !operation?.operationId) return validate(req, operation);
    let plan = plans.get(operation);
    if (!plan) plans.set(operation, (plan = validationPlan(operation)));
    const coerced = { ...req };
    const result: ReturnType<typeof validate> = { valid: true, coerced, errors: [] };
    const errors = result.errors!;
    const validators = validator.getRequestValidatorsForOperation(operation.operationId) ?? [];
    const { params, query, headers, cookies, requestBody } = router.parseRequest(req, operation);
    if (query) {
      for (const name of Object.keys(query)) {
        if (typeof query[name] === 'string' && plan.arrayQuery.has(name)) query[name] = [query[name] as string];
      }
    }
    const parameters: Record<string, unknown> = {};
    if (params != null) parameters.path = params;
    if (query != null) parameters.query = query;
    if (headers != null) parameters.header = headers;
    if (cookies != null) parameters.cookie = cookies;
    if (typeof req.body !== 'object' && req.body !== undefined && plan.jsonBodyOnly) {
      try {
        JSON.parse(`${req.body as string}`);
      } catch (error) {
        if (error instanceof Error)
          errors.push({
            keyword: 'parse',
            instancePath: '',
            schemaPath: '#/requestBody',
            params: [],
            message: error.message,
          });
      }
    }
    if (plan.jsonQuery.length > 0) {
      const rawQuery = router.parseRequestQuery(req) as Record<string, unknown>;
      for (const name of plan.jsonQuery) {
        const rawValue = rawQuery[name];
        if (typeof rawValue !== 'string') continue;
        try {
          JSON.parse(rawValue);
        } catch (error) {
          if (error instanceof Error)
            errors.push({
              keyword: 'parse',
              instancePath: `/query/${name}`,
              schemaPath: `#/parameters/${name}`,
              params: [],
              message: error.message,
            });
        }
      }
    }
    const rawContentType = headers['content-type'];
    const contentType = String((Array.isArray(rawContentType) ? rawContentType[0] : rawContentType) || '')
      .split(';')[0]!
      .trim()
      .toLowerCase();
    if (typeof requestBody === 'object' || contentType === 'application/json') parameters.requestBody = requestBody;
    for (const check of validators) {
      check(parameters);
      if (check.errors) errors.push(...check.errors);
      else if (validator.coerceTypes) {
        coerced.query = parameters.query as typeof coerced.query;
        (coerced as { params?: unknown }).params = parameters.path;
      }
    }
    if (errors.length === 0) result.errors = null;
    else result.valid = false;
    return result;
  };
}

interface ValidationPlan {
  /** Query parameters whose schema is an array: a single value is made a list of one. */
  arrayQuery: Set<string>;
  /** Query parameters whose content is JSON: a malformed value is an error of its own. */
  jsonQuery: string[];
  /** Whether JSON is the body's only media type: a body that is not an object must then parse as JSON. */
  jsonBodyOnly: boolean;
}

function validationPlan(operation: Operation): ValidationPlan {
  type Parameter = { in?: string; name?: string; schema?: { type?: unknown }; content?: Record<string, unknown> };
  const parameters = (operation.parameters ?? []) as Parameter[];
  const arrayQuery = new Set<string>();
  const seen = new Set<string>();
  for (const parameter of parameters) {
    if (parameter.in !== 'query' || parameter.name === undefined || seen.has(parameter.name)) continue;
    seen.add(parameter.name); // lodash's find: the first parameter of the name
    if (parameter.schema && parameter.schema.type === 'array') arrayQuery.add(parameter.name);
  }
  const jsonQuery = parameters
    .filter(
      (parameter) => !('$ref' in parameter) && parameter.in === 'query' && parameter.content?.['application/json'],
    )
    .map((parameter) => parameter.name!);
  const formats = Object.keys(
    ((operation.requestBody as { content?: Record<string, unknown> } | undefined)?.content ?? {}) as object,
  );
  return { arrayQuery, jsonQuery, jsonBodyOnly: formats.length === 1 && formats[0] === 'application/json' };
}

/**
 * openapi-backend copies a request's query object by turning it into a query string it never uses (URLSearchParams)
 * and then deep-cloning it with lodash, a visible share of a hot read's CPU. Express parses queries into
 * strings and arrays of strings (its "simple" parser, node:querystring), and validation coerces them into other
 * primitives and arrays of them: a copy with its arrays copied is a deep copy of such a query. Anything else (an
 * object value) is left to openapi-backend's own copy.
 */
function copyQueryPlainly(api: OpenAPIBackend): void {
  const router = api.router;
  const parseQuery = router.parseRequestQuery.bind(router);
  router.parseRequestQuery = (req) => {
    const query = req.query;
    if (typeof query !== 'object' || query === null) return parseQuery(req);
    const copy: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(query)) {
      if (isPrimitive(value)) copy[name] = value;
      else if (Array.isArray(value) && value.every(isPrimitive)) copy[name] = [...value];
      else return parseQuery(req);
    }
    return copy;
  };
}

function isPrimitive(value: unknown): boolean {
  return value === null || (typeof value !== 'object' && typeof value !== 'function');
}
