// Routing with the path templates compiled once answers as openapi-backend's own router does, on both surfaces.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { OpenAPIBackend, type Document } from 'openapi-backend';
import { bundledSpecFile } from '../../server/contract/bundled-specs.ts';
import { matchTemplatesOnce } from '../../server/contract/route-matching.ts';

const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'options', 'trace'];

async function router(definition: Document, compiledOnce: boolean) {
  const api = new OpenAPIBackend({ definition, strict: false, quick: true, validate: false });
  await api.init();
  // openapi-backend's matchOperation flattens the definition into its list of operations twice per match (lodash
  // chains over every path): three quarters of this file's CPU, for a list that depends on the definition alone. Its
  // own router keeps its own matching (exact path, then every template's pattern made and tested, ordered by
  // specificity) over the list built once, as the service's contract does (server/contract/contract.ts).
  const operations = api.router.getOperations();
  api.router.getOperations = () => operations;
  if (compiledOnce) matchTemplatesOnce(api);
  return api.router;
}

/** Every path of the spec with its parameters filled in several ways, and paths next to them that match nothing. */
function paths(definition: Document): string[] {
  const templates = Object.keys(definition.paths ?? {});
  const filled = templates.flatMap((t) => [
    t.replace(/\{[^}]+\}/g, 'x'),
    t.replace(/\{[^}]+\}/g, '0062eb69-0850-50d0-85b9-2d36e004ad63'),
    t.replace(/\{[^}]+\}/g, 'a.b'),
  ]);
  const near = filled.flatMap((p) => [
    `${p}/`,
    `${p}/extra`,
    `${p}/special`,
    p.replace(/\/[^/]+$/, ''),
    p.replace(/\/[^/]+$/, '/special'),
    p.toUpperCase(),
    `${p}.json`,
  ]);
  return [...new Set([...templates, ...filled, ...near, '/', '/nothing', ''])];
}

function outcome(match: () => unknown): string {
  try {
    const operation = match() as { operationId?: string } | undefined;
    return operation ? `operation ${operation.operationId}` : 'none';
  } catch (error) {
    return `error ${(error as Error).message}`;
  }
}

describe('route matching with compiled templates', function () {
  // Tens of thousands of matches by each router, bound by CPU alone: a fixed amount of work that a machine shared with
  // other suites stretches past the default minute.
  this.timeout(300_000);

  // Templates that overlap, where the order of the matches decides: the most literal characters first, ties in the
  // definition's order.
  const op = (operationId: string) => ({ operationId, responses: { 200: { description: 'ok' } } });
  const overlapping = {
    openapi: '3.1.0',
    info: { title: 'overlap', version: '1' },
    paths: {
      '/things/{id}/special': { get: op('idSpecial') },
      '/things/special/{x}': { get: op('specialX'), post: op('specialXPost') },
      '/things/{a}/{b}': { get: op('ab'), delete: op('abDelete') },
      '/things/{id}': { get: op('thing') },
      '/things/{id}.json': { get: op('thingJson') },
    },
  } as unknown as Document;
  const definitions: Array<[string, () => Document]> = [
    ['the general surface', () => JSON.parse(readFileSync(bundledSpecFile('general'), 'utf8')) as Document],
    ['the partner-v1 surface', () => JSON.parse(readFileSync(bundledSpecFile('partner-v1'), 'utf8')) as Document],
    ['overlapping templates', () => overlapping],
  ];
  for (const [name, load] of definitions) {
    it(`routes every method and path of ${name} as openapi-backend does, strict or not`, async () => {
      const definition = load();
      const [theirs, ours] = await Promise.all([router(definition, false), router(definition, true)]);
      let compared = 0;
      let routed = 0;
      for (const path of paths(definition)) {
        for (const method of METHODS) {
          for (const strict of [false, true]) {
            const request = { method, path, headers: {}, query: {} };
            const expected = outcome(() => theirs.matchOperation(request, strict));
            assert.equal(
              outcome(() => ours.matchOperation(request, strict)),
              expected,
              `${method} ${path} (strict: ${strict})`,
            );
            compared++;
            if (expected.startsWith('operation')) routed++;
          }
        }
      }
      // The comparison covered every operation at least once, and refusals too.
      assert.ok(routed >= Object.keys(definition.paths ?? {}).length, `routed ${routed}`);
      assert.ok(compared > routed);
    });
  }
});
