// The mock server (npm run mock), in process: for every operation of every generated surface it answers a valid
// request with a documented status, and every documented status (asked for with `Prefer: code=…`) with a body
// and headers that validate against the spec. Requests are built from the spec's own parameter and body examples.
import assert from 'node:assert/strict';
import type { Document, Operation } from 'openapi-backend';
import { pino } from 'pino';
import supertest from 'supertest';
import { createMockApp } from '../../scripts/mock/app.ts';
import { bundledSpecs } from '../../server/contract/bundled-specs.ts';
import { loadContract, type Contract } from '../../server/contract/contract.ts';

type Parameter = {
  name: string;
  in: string;
  required?: boolean;
  example?: unknown;
  examples?: Record<string, { value: unknown }>;
  schema?: { example?: unknown; default?: unknown; enum?: unknown[]; format?: string };
};
type SecurityScheme = { type: string; in?: string; name?: string; scheme?: string };
type MediaType = { example?: unknown; examples?: Record<string, { value: unknown }> };

const specs = bundledSpecs();

describe('mock server (scripts/mock.ts)', () => {
  let mock: ReturnType<typeof supertest>;
  const contracts = new Map<string, Contract>();

  before(async () => {
    mock = supertest((await createMockApp(pino({ level: 'silent' }))).app);
    for (const spec of specs) contracts.set(spec.surface, await loadContract(spec.definition));
  });

  for (const spec of specs) {
    describe(spec.surface, () => {
      it('answers every operation, at every documented status, with a response the spec accepts', async function () {
        const contract = contracts.get(spec.surface)!;
        const failures: string[] = [];
        let checked = 0;
        for (const operation of contract.api.router.getOperations()) {
          const statuses = [undefined, ...Object.keys(operation.responses ?? {})];
          for (const status of statuses) {
            const res = await send(mock, spec.definition, operation, status ? { prefer: `code=${status}` } : {});
            const label = `${operation.operationId} ${status ? `Prefer code=${status}` : '(default)'}`;
            if (status && res.status !== Number(status))
              failures.push(`${label}: answered ${res.status}: ${res.text.slice(0, 300)}`);
            if (!status && (res.status < 200 || res.status > 299))
              failures.push(`${label}: answered ${res.status}, not a 2xx: ${res.text.slice(0, 300)}`);
            for (const failure of contract.checkResponse(operation, {
              status: res.status,
              headers: res.headers,
              body: bodyOf(res),
            }))
              failures.push(`${label}: ${failure}`);
            checked++;
          }
        }
        assert.deepEqual(failures, []);
        assert.ok(checked > contract.api.router.getOperations().length, `checked ${checked} responses`);
      });

      it('refuses a secured operation without credentials (401) and an invalid request (400), like the service', async () => {
        const contract = contracts.get(spec.surface)!;
        const secured = contract.api.router.getOperations().find((op) => securityOf(spec.definition, op).length > 0)!;
        const anonymous = await send(mock, spec.definition, secured, { credentials: false });
        assert.equal(anonymous.status, 401);
        assert.deepEqual(
          contract.checkResponse(secured, { status: 401, headers: anonymous.headers, body: anonymous.body }),
          [],
        );

        const withQuery = contract.api.router
          .getOperations()
          .find((op) => parametersOf(op).some((p) => p.in === 'query') && op.responses?.['400']);
        const withBody = contract.api.router.getOperations().find((op) => op.requestBody && op.responses?.['400']);
        const invalid = withQuery
          ? await send(mock, spec.definition, withQuery, {
              query: Object.fromEntries(
                parametersOf(withQuery)
                  .filter((p) => p.in === 'query')
                  .map((p) => [p.name, '\u0000not valid\u0000']),
              ),
            })
          : await send(mock, spec.definition, withBody!, { body: { unexpected: true } });
        assert.equal(invalid.status, 400, invalid.text);
        assert.equal(invalid.body.code, 'invalid_request');
        assert.ok(invalid.body.errors.length > 0);
      });
    });
  }

  it('picks a named example with Prefer: example=…', async () => {
    const spec = specs.find((s) => s.surface === 'partner-v1')!;
    const operation = contracts.get('partner-v1')!.match('get', '/api/v1/universities/x')!;
    const examples = (operation.responses!['404'] as { content: Record<string, MediaType> }).content[
      'application/problem+json'
    ]!.examples!;
    const [name, { value }] = Object.entries(examples)[0]!;
    const res = await send(mock, spec.definition, operation, { prefer: `code=404, example=${name}` });
    assert.deepEqual(res.body, value);
  });

  it('answers malformed JSON with a 400, paths of no surface with a 404, an undocumented Prefer code with a 400, and CORS preflights', async () => {
    const malformed = await mock
      .post('/api/accounts')
      .set('Content-Type', 'application/json')
      .send('{"email":')
      .expect(400);
    assert.equal(malformed.body.code, 'invalid_request');
    const unknown = await mock
      .get('/api/v1/no-such-thing')
      .expect(404)
      .expect('Content-Type', /problem\+json/);
    assert.equal(unknown.body.code, 'not_found');
    const undocumented = await mock
      .get('/api/v1/health')
      .set('X-Service-API-Key', 'k')
      .set('Prefer', 'code=418')
      .expect(400);
    assert.match(undocumented.body.errors[0].message, /code=418 is not documented/);
    await mock
      .options('/api/v1/health')
      .set('Origin', 'http://localhost:3000')
      .set('Access-Control-Request-Method', 'GET')
      .set('Access-Control-Request-Headers', 'x-service-api-key')
      .expect(204)
      .expect('Access-Control-Allow-Origin', '*')
      .expect('Access-Control-Allow-Headers', 'x-service-api-key');
  });
});

/** A request the spec accepts, built from its examples; the credential is any value of an accepted scheme. */
function send(
  mock: ReturnType<typeof supertest>,
  definition: Document,
  operation: Operation,
  options: { prefer?: string; credentials?: boolean; query?: Record<string, string>; body?: unknown } = {},
) {
  const parameters = parametersOf(operation);
  const path = operation.path.replace(/\{([^}]+)\}/g, (_, name: string) =>
    encodeURIComponent(String(exampleOf(parameters.find((p) => p.in === 'path' && p.name === name)!))),
  );
  const query =
    options.query ??
    Object.fromEntries(
      parameters.filter((p) => p.in === 'query' && p.required).map((p) => [p.name, String(exampleOf(p))]),
    );
  let request = mock[operation.method as 'get'](path).query(query);
  if (options.prefer) request = request.set('Prefer', options.prefer);
  const scheme = securityOf(definition, operation)[0];
  if (scheme && options.credentials !== false)
    request =
      scheme.type === 'apiKey'
        ? request.set(scheme.name!, 'mock-credential')
        : request.set('Authorization', 'Bearer mock-credential');
  const json = (operation.requestBody as { content?: Record<string, MediaType> } | undefined)?.content?.[
    'application/json'
  ];
  const body = options.body ?? (json ? (json.example ?? Object.values(json.examples ?? {})[0]?.value) : undefined);
  return body === undefined ? request : request.send(body as object);
}

function parametersOf(operation: Operation): Parameter[] {
  return (operation.parameters ?? []) as Parameter[];
}

/** The parameter's example, else one its schema gives (a UUID for `format: uuid`, which needs none). */
function exampleOf({ name, example, examples, schema }: Parameter): unknown {
  const value =
    example ??
    Object.values(examples ?? {})[0]?.value ??
    schema?.example ??
    schema?.default ??
    schema?.enum?.[0] ??
    (schema?.format === 'uuid' ? '00000000-0000-4000-8000-000000000000' : undefined);
  assert.notEqual(value, undefined, `parameter ${name} needs an example for the mock test`);
  return value;
}

/** The schemes of the operation's first security requirement (an empty list: no credentials needed). */
function securityOf(definition: Document, operation: Operation): SecurityScheme[] {
  const requirement = (operation.security ?? definition.security ?? [])[0] ?? {};
  const schemes = (definition.components?.securitySchemes ?? {}) as Record<string, SecurityScheme>;
  return Object.keys(requirement).map((name) => schemes[name]!);
}

/** The body as openapi-backend validates it: null when there is none (204), the text for non-JSON types. */
function bodyOf(res: supertest.Response): unknown {
  if (res.text === '' || res.text === undefined) return null;
  return /json/.test(String(res.headers['content-type'])) ? res.body : res.text;
}
