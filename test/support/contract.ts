// Every response a test receives is checked against the spec here: a documented status, a body and headers that
// match its schemas, problem+json for every error. `contractClient` attaches the check to each request, so a
// contract violation fails the test that caused it. The statuses each operation answered are recorded for the
// coverage check at the run's end (run-gate.ts, coverage.ts).
import assert from 'node:assert/strict';
import supertest from 'supertest';
import type { Surface } from '../../server/contract/surfaces.ts';
import { bundledSpecs } from '../../server/contract/bundled-specs.ts';
import { loadContract, type Contract } from '../../server/contract/contract.ts';
import { runState } from './run-state.ts';

type App = Parameters<typeof supertest>[0];

export interface SurfaceContract {
  surface: Surface;
  contract: Contract;
}

/**
 * The contract of every surface of server/contract/surfaces.ts that has been generated, loaded once; root-hooks.ts
 * calls it before any test, since supertest's checks are synchronous.
 */
export async function loadContracts(): Promise<SurfaceContract[]> {
  runState.contracts ??= await Promise.all(
    bundledSpecs().map(async ({ surface, definition }) => ({ surface, contract: await loadContract(definition) })),
  );
  return runState.contracts;
}

/** surface → operationId → statuses seen in its responses. */
export const exercised = runState.exercised;

function record(surface: Surface, operationId: string, status: number): void {
  const operations = exercised.get(surface) ?? exercised.set(surface, new Map()).get(surface)!;
  operations.set(operationId, (operations.get(operationId) ?? new Set<number>()).add(status));
}

/**
 * The path of a request target as it was sent, the query cut off, as the server routes it. Not `new URL(...).pathname`:
 * that removes `.` and `..` segments, so a path parameter of `.` would be judged against another operation's contract.
 */
export function sentPath(target: string): string {
  const queryStart = target.indexOf('?');
  return queryStart === -1 ? target : target.slice(0, queryStart);
}

function conformsToContract(res: supertest.Response): void {
  const contracts = runState.contracts;
  assert.ok(contracts, 'contracts are loaded by the root hook before tests run');
  const request = (res as unknown as { req: { method: string; path: string } }).req;
  const method = request.method.toLowerCase();
  const path = sentPath(request.path);
  const owner = contracts.find(({ contract: c }) => c.match(method, path) || c.allowedMethods(path).length > 0);
  const operation = owner?.contract.match(method, path);
  if (res.status >= 400) {
    assert.match(
      String(res.headers['content-type']),
      /^application\/problem\+json/,
      `${res.status} must be problem+json`,
    );
  }
  if (res.status >= 400 && method !== 'head') {
    assert.equal(res.body.status, res.status, 'problem.status must equal the HTTP status');
    for (const field of ['type', 'title', 'code', 'detail'])
      assert.equal(typeof res.body[field], 'string', `problem.${field} must be a string`);
  }
  assert.ok(res.headers['x-request-id'], 'every response carries X-Request-Id');
  if (!owner || !operation) {
    // No operation: only the generic 404/405/413 problems may answer.
    assert.ok(
      [404, 405, 413].includes(res.status),
      `${method.toUpperCase()} ${path} matched no operation but answered ${res.status}`,
    );
    if (owner && res.status === 405) recordMethodNotAllowed(owner, path, res);
    return;
  }
  const { surface, contract } = owner;
  // supertest reports an empty body as {}; a 204 has none, nor has the answer to a HEAD.
  const body = res.status === 204 ? null : res.body;
  const failures = contract.checkResponse(
    operation,
    { status: res.status, headers: res.headers, body },
    { bodiless: method === 'head' },
  );
  assert.deepEqual(
    failures,
    [],
    `${operation.operationId} ${res.status} breaks the contract:\n  ${failures.join('\n  ')}`,
  );
  record(surface, operation.operationId ?? `${method} ${path}`, res.status);
}

/**
 * A 405 belongs to the path, so it is documented on (and checked against) each operation of that path: the
 * response must match the 405 that every one of them documents.
 */
function recordMethodNotAllowed({ surface, contract }: SurfaceContract, path: string, res: supertest.Response): void {
  for (const method of contract.allowedMethods(path)) {
    const operation = contract.match(method.toLowerCase(), path)!;
    const failures = contract.checkResponse(operation, { status: 405, headers: res.headers, body: res.body });
    assert.deepEqual(
      failures,
      [],
      `405 on ${path} breaks the contract of ${operation.operationId}:\n  ${failures.join('\n  ')}`,
    );
    record(surface, operation.operationId!, 405);
  }
}

/** A supertest client whose every response is checked against the spec. */
export function contractClient(app: App) {
  const agent = supertest(app);
  const checked = (method: 'get' | 'head' | 'post' | 'put' | 'patch' | 'delete' | 'options') => (path: string) =>
    agent[method](path).expect(conformsToContract);
  return {
    get: checked('get'),
    head: checked('head'),
    post: checked('post'),
    put: checked('put'),
    patch: checked('patch'),
    delete: checked('delete'),
    options: checked('options'),
  };
}
