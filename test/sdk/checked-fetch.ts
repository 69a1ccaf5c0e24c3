// A fetch for the SDK under test that checks every response against the spec, as the contract client does for
// supertest: a documented status, a body and headers that match the operation's schemas. A violation fails the
// request, and so the test that made it.
import assert from 'node:assert/strict';
import { bundledSpecs } from '../../server/contract/bundled-specs.ts';
import { loadContract, type Contract } from '../../server/contract/contract.ts';

let contracts: Promise<Contract[]> | undefined;

export async function contractCheckedFetch(): Promise<(request: Request) => Promise<Response>> {
  contracts ??= Promise.all(bundledSpecs().map((spec) => loadContract(spec.definition)));
  const loaded = await contracts;
  return async (request) => {
    const method = request.method.toLowerCase();
    const path = new URL(request.url).pathname;
    const response = await fetch(request);
    const found = loaded
      .map((contract) => ({ contract, operation: contract.match(method, path) }))
      .find(({ operation }) => operation);
    assert.ok(found?.operation, `${request.method} ${path} is no operation of the spec`);
    const type = response.headers.get('content-type') ?? '';
    // Streams are read by the caller; their status and headers are still checked.
    const text = type.startsWith('text/event-stream') ? '' : await response.clone().text();
    // openapi-backend validates an absent body (204) as null.
    const body = text === '' ? null : /json/.test(type) ? JSON.parse(text) : text;
    const failures = found.contract.checkResponse(found.operation, {
      status: response.status,
      headers: Object.fromEntries(response.headers),
      body,
    });
    assert.deepEqual(
      failures,
      [],
      `${found.operation.operationId} ${response.status} breaks the contract:\n  ${failures.join('\n  ')}`,
    );
    return response;
  };
}
