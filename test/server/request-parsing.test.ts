// The parse and the validation of a routed request with what they take from the operation found once
// (server/contract/contract.ts) answer as openapi-backend's own do, for every operation of both surfaces.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { OpenAPIBackend, type Document, type Operation } from 'openapi-backend';
import { bundledSpecFile } from '../../server/contract/bundled-specs.ts';
import { loadContract } from '../../server/contract/contract.ts';

const VALUES = ['x', '0062eb69-0850-50d0-85b9-2d36e004ad63', 'a%20b', '%E2%82%AC', 'a.b', '', '%zz'];

function requests(operation: Operation) {
  const queryNames = ((operation.parameters ?? []) as Array<{ in: string; name: string }>)
    .filter((p) => p.in === 'query')
    .map((p) => p.name);
  const queries: Array<Record<string, string | string[]>> = [
    {},
    Object.fromEntries(queryNames.map((name) => [name, '1'])),
    Object.fromEntries(queryNames.map((name) => [name, 'a,b%2Cc'])),
    Object.fromEntries(queryNames.map((name) => [name, ['a', 'b']])),
    Object.fromEntries(queryNames.map((name) => [name, '{"a":1}'])),
    { unknown: 'z' },
  ];
  return VALUES.flatMap((value) =>
    queries.map((query) => ({
      method: operation.method.toUpperCase(),
      path: `${operation.path.replace(/\{[^}]+\}/g, value)}${value === 'x' ? '/' : ''}`,
      query,
      headers: {
        'content-type': 'application/json',
        'x-request-id': 'r',
        'idempotency-key': 'k',
        authorization: 'Bearer t',
      },
      body: { title: 'a' },
    })),
  ).flatMap((request, i) =>
    i % 7 === 0
      ? [request, { ...request, body: 'not json' }, { ...request, body: undefined }, { ...request, body: '{"a":1}' }]
      : [request],
  );
}

function comparable(parsed: unknown) {
  const { cookies, ...rest } = parsed as { cookies: object };
  return { ...rest, cookies: { ...cookies } };
}

for (const surface of ['general', 'partner-v1'] as const) {
  describe(`parsing a routed request of ${surface} with each operation's parts made once`, () => {
    it("gives what openapi-backend's own parse gives, for every operation", async () => {
      const definition = JSON.parse(readFileSync(bundledSpecFile(surface), 'utf8')) as Document;
      const plain = new OpenAPIBackend({ definition, strict: false, quick: true, validate: false });
      await plain.init();
      const contract = await loadContract(JSON.parse(JSON.stringify(definition)) as Document);
      const operations = contract.api.router.getOperations();
      assert.ok(operations.length > 5);
      let compared = 0;
      for (const operation of operations) {
        const theirs = plain.router.getOperation(operation.operationId!)!;
        for (const request of requests(operation)) {
          const parse = (router: OpenAPIBackend['router'], op: Operation) => {
            try {
              return comparable(router.parseRequest(structuredClone(request), op));
            } catch (error) {
              return `throws ${(error as Error).name}`;
            }
          };
          assert.deepEqual(
            parse(contract.api.router, operation),
            parse(plain.router, theirs),
            `${operation.operationId} ${JSON.stringify(request)}`,
          );
          compared += 1;
        }
      }
      assert.ok(compared > operations.length * 10);
    });
  });
}

/** What neither spec has, but openapi-backend's parse and validation treat apart: every kind of query parameter. */
const SYNTHETIC = {
  openapi: '3.1.0',
  info: { title: 'kinds of parameters', version: '1' },
  paths: {
    '/things/{id}/{id}': {
      post: {
        operationId: 'postThing',
        parameters: [
          { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
          { name: 'exploded', in: 'query', schema: { type: 'array', items: { type: 'integer' } } },
          { name: 'exploded', in: 'query', schema: { type: 'string' } },
          { name: 'piped', in: 'query', style: 'pipeDelimited', explode: false, schema: { type: 'array' } },
          { name: 'spaced', in: 'query', style: 'spaceDelimited', explode: false, schema: { type: 'array' } },
          { name: 'json', in: 'query', content: { 'application/json': { schema: { type: 'object' } } } },
          { name: 'x-count', in: 'header', schema: { type: 'integer' } },
        ],
        requestBody: { content: { 'application/json': { schema: { type: 'object', required: ['title'] } } } },
        responses: { 200: { description: 'ok' } },
      },
    },
  },
};

describe('parsing and validating every kind of query parameter', () => {
  it("gives what openapi-backend's own parse and validation give", async () => {
    const contract = await loadContract(structuredClone(SYNTHETIC) as unknown as Document);
    const operation = contract.api.router.getOperations()[0]!;
    const validator = contract.api.validator;
    const theirs = Object.getPrototypeOf(validator).validateRequest as typeof validator.validateRequest;
    const plain = new OpenAPIBackend({
      definition: structuredClone(SYNTHETIC) as unknown as Document,
      strict: false,
      quick: true,
      validate: false,
    });
    await plain.init();
    const queries: Array<Record<string, string | string[]>> = [
      { exploded: '3', piped: 'a|b%7Cc', spaced: 'a b%20c', json: '{"a":1}' },
      { exploded: ['3', '4'], piped: ['a', 'b'], json: '{bad' },
      { exploded: 'x', spaced: 'a,b', json: '[1]' },
    ];
    let invalid = 0;
    for (const path of ['/things/a/a', '/things/a/b', '/things/%E2%82%AC/%E2%82%AC'])
      for (const query of queries)
        for (const body of [{ title: 't' }, {}, 'text', undefined]) {
          const request = {
            method: 'POST',
            path,
            query,
            headers: { 'content-type': 'application/json', 'x-count': '7' },
            body,
          };
          const parse = (router: OpenAPIBackend['router'], op: Operation) =>
            comparable(router.parseRequest(structuredClone(request) as never, op));
          assert.deepEqual(
            parse(contract.api.router, operation),
            parse(plain.router, plain.router.getOperations()[0]!),
          );
          const ours = JSON.parse(
            JSON.stringify(validator.validateRequest(structuredClone(request) as never, operation)),
          );
          const openapiBackend = JSON.parse(
            JSON.stringify(theirs.call(validator, structuredClone(request) as never, operation)),
          );
          assert.deepEqual(ours, openapiBackend, JSON.stringify(request));
          if (!ours.valid) invalid += 1;
        }
    assert.ok(invalid > 0);
  });
});

for (const surface of ['general', 'partner-v1'] as const) {
  describe(`validating a routed request of ${surface} with each operation's plan found once`, () => {
    it("gives what openapi-backend's own validation gives, for every operation", async () => {
      const definition = JSON.parse(readFileSync(bundledSpecFile(surface), 'utf8')) as Document;
      const contract = await loadContract(definition);
      const validator = contract.api.validator;
      const theirs = Object.getPrototypeOf(validator).validateRequest as typeof validator.validateRequest;
      let compared = 0;
      let invalid = 0;
      for (const operation of contract.api.router.getOperations()) {
        for (const request of requests(operation)) {
          const validate = (run: () => unknown) => {
            try {
              return JSON.parse(JSON.stringify(run()));
            } catch (error) {
              return `throws ${(error as Error).name}`;
            }
          };
          const ours = validate(() => validator.validateRequest(structuredClone(request), operation));
          const openapiBackend = validate(() => theirs.call(validator, structuredClone(request), operation));
          assert.deepEqual(ours, openapiBackend, `${operation.operationId} ${JSON.stringify(request)}`);
          if (ours.valid === false) invalid += 1;
          compared += 1;
        }
      }
      assert.ok(invalid > 0 && invalid < compared, `${invalid} of ${compared} invalid`);
    });
  });
}
