// The response checks compiled when first asked for, once per distinct schema (server/contract/contract.ts), answer as
// openapi-backend's own do, for every documented status of every operation of both surfaces: a body and headers that
// fit, and ones that do not.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { OpenAPIBackend, type Document } from 'openapi-backend';
import { bundledSpecFile } from '../../server/contract/bundled-specs.ts';
import { loadContract } from '../../server/contract/contract.ts';
import { addServiceFormats } from '../../server/contract/formats.ts';

type Response = { content?: Record<string, { example?: unknown }>; headers?: Record<string, unknown> };

/** Bodies to check against a status's schema: its example where the spec gives one, and shapes most schemas refuse. */
function bodies(response: Response): unknown[] {
  const example = response.content?.['application/json']?.example;
  return [...(example === undefined ? [] : [example]), {}, null, [], 'x', 1, { id: 1 }];
}

/** Header sets: none, every documented one as a text and as a number, and one the spec does not name beside them. */
function headerSets(response: Response): Array<Record<string, unknown>> {
  const names = Object.keys(response.headers ?? {}).map((name) => name.toLowerCase());
  return [
    {},
    Object.fromEntries(names.map((name) => [name, 'x'])),
    Object.fromEntries(names.map((name) => [name, '7'])),
    { ...Object.fromEntries(names.map((name) => [name, '7'])), 'x-undocumented': 'x' },
  ];
}

for (const surface of ['general', 'partner-v1'] as const) {
  describe(`response checks of ${surface}, compiled once per schema`, () => {
    it("give what openapi-backend's own give, for every documented status of every operation", async () => {
      const definition = JSON.parse(readFileSync(bundledSpecFile(surface), 'utf8')) as Document;
      const plain = new OpenAPIBackend({
        definition: structuredClone(definition),
        strict: false,
        quick: true,
        validate: true,
        coerceTypes: true,
        ajvOpts: { useDefaults: true, allErrors: true },
        customizeAjv: (_ajv, ajvOpts) => {
          const ajv = new Ajv2020({ ...ajvOpts, strict: false, validateSchema: false });
          addServiceFormats(ajv);
          return ajv as never;
        },
      });
      await plain.init();
      const contract = await loadContract(structuredClone(definition));
      let compared = 0;
      let refused = 0;
      for (const operation of contract.api.router.getOperations()) {
        const theirs = plain.router.getOperation(operation.operationId!)!;
        for (const [status, response] of Object.entries((operation.responses ?? {}) as Record<string, Response>)) {
          for (const body of bodies(response)) {
            const ours = contract.api.validator.validateResponse(structuredClone(body), operation, Number(status));
            const stock = plain.validator.validateResponse(structuredClone(body), theirs, Number(status));
            assert.equal(ours.valid, stock.valid, `${operation.operationId} ${status} body ${JSON.stringify(body)}`);
            compared += 1;
            if (!ours.valid) refused += 1;
          }
          for (const headers of headerSets(response)) {
            for (const setMatchType of ['any', 'superset', 'subset', 'exact'] as const) {
              const options = { statusCode: Number(status), setMatchType: setMatchType as never };
              const ours = contract.api.validator.validateResponseHeaders({ ...headers }, operation, options);
              const stock = plain.validator.validateResponseHeaders({ ...headers }, theirs, options);
              const what = `${operation.operationId} ${status} ${setMatchType} headers ${JSON.stringify(headers)}`;
              assert.equal(ours.valid, stock.valid, what);
              compared += 1;
              if (!ours.valid) refused += 1;
            }
          }
        }
      }
      // Both answers were seen, many times: the comparison is not of checks that always pass.
      assert.ok(refused > 50 && compared - refused > 50, `${refused} refused of ${compared}`);
    });
  });
}
