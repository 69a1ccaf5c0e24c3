// Every response a test receives is checked against the spec here: a documented status, a body and headers that
// match its schemas, problem+json for every error. `contractClient` attaches the check to each request, so a
// contract violation fails the test that caused it. Exercised operations and statuses are recorded for the
// coverage check in root-hooks.ts.
import assert from 'node:assert/strict';
import supertest from 'supertest';
import type { Contract } from '../../server/contract.ts';
import { loadGeneralContract } from '../../server/general/index.ts';
import { loadPartnerV1Contract } from '../../server/partner-v1/index.ts';

type App = Parameters<typeof supertest>[0];

let contracts: Contract[] | undefined;
/** Loads the specs once; root-hooks.ts calls it before any test, since supertest's checks are synchronous. */
export async function loadContracts(): Promise<Contract[]> {
  contracts ??= await Promise.all([loadPartnerV1Contract(), loadGeneralContract()]);
  return contracts;
}

/** operationId → statuses seen in responses. */
export const exercised = new Map<string, Set<number>>();

function conformsToContract(res: supertest.Response): void {
  assert.ok(contracts, 'contracts are loaded by the root hook before tests run');
  const request = (res as unknown as { req: { method: string; path: string } }).req;
  const method = request.method.toLowerCase();
  const path = new URL(request.path, 'http://localhost').pathname;
  const contract = contracts.find((c) => c.match(method, path) || c.allowedMethods(path).length > 0);
  const operation = contract?.match(method, path);
  if (res.status >= 400) {
    assert.match(String(res.headers['content-type']), /^application\/problem\+json/, `${res.status} must be problem+json`);
    assert.equal(res.body.status, res.status, 'problem.status must equal the HTTP status');
    for (const field of ['type', 'title', 'code', 'detail']) assert.equal(typeof res.body[field], 'string', `problem.${field} must be a string`);
  }
  assert.ok(res.headers['x-request-id'], 'every response carries X-Request-Id');
  if (!operation) {
    // No operation: only the generic 404/405 problems may answer.
    assert.ok([404, 405, 413].includes(res.status), `${method.toUpperCase()} ${path} matched no operation but answered ${res.status}`);
    return;
  }
  const failures = contract!.checkResponse(operation, { status: res.status, headers: res.headers, body: res.body });
  assert.deepEqual(failures, [], `${operation.operationId} ${res.status} breaks the contract:\n  ${failures.join('\n  ')}`);
  const id = operation.operationId ?? `${method} ${path}`;
  exercised.set(id, (exercised.get(id) ?? new Set<number>()).add(res.status));
}

/** A supertest client whose every response is checked against the spec. */
export function contractClient(app: App) {
  const agent = supertest(app);
  const checked =
    (method: 'get' | 'post' | 'put' | 'patch' | 'delete' | 'options') =>
    (path: string) =>
      agent[method](path).expect(conformsToContract);
  return {
    get: checked('get'),
    post: checked('post'),
    put: checked('put'),
    patch: checked('patch'),
    delete: checked('delete'),
    options: checked('options'),
  };
}
