// The contracts and docs routes of the apps of one process (the tests build hundreds) read one parsed, dereferenced
// spec per surface (server/contract/bundled-specs.ts, contract.ts): what they share cannot be written, and what an app
// registers stays its own.
import assert from 'node:assert/strict';
import { bundledSpecs, sharedBundledSpec } from '../../server/contract/bundled-specs.ts';
import { loadSurfaceContract } from '../../server/contract/contract.ts';

describe('contracts of one surface in a process', () => {
  it('share one definition, frozen all through: a write into it throws instead of reaching the other apps', async () => {
    const [first, second] = [await loadSurfaceContract('general'), await loadSurfaceContract('general')];
    assert.equal(first.definition, second.definition);
    assert.equal(first.api.definition, second.api.definition);
    assert.ok(Object.isFrozen(first.definition.info));
    const schemas = first.api.definition.components?.schemas as Record<string, { properties?: object }>;
    const problem = schemas['Problem']!;
    assert.ok(Object.isFrozen(first.api.definition) && Object.isFrozen(problem) && Object.isFrozen(problem.properties));
    assert.throws(() => {
      (problem as { title?: string }).title = 'changed by one app';
    }, TypeError);
    // An operation as the router hands it to a request: its responses are the definition's own.
    const operation = first.match('get', '/api/users/me')!;
    assert.throws(() => Object.assign(operation.responses!, { 299: { description: 'added by one app' } }), TypeError);
  });

  it('read the spec the process shares, while bundledSpecs() parses one for its caller to own', async () => {
    const contract = await loadSurfaceContract('partner-v1');
    assert.equal(contract.definition, sharedBundledSpec('partner-v1').definition);
    const [owned] = bundledSpecs().filter(({ surface }) => surface === 'partner-v1');
    assert.notEqual(owned!.definition, contract.definition);
    assert.deepEqual(owned!.definition, contract.definition);
    owned!.definition.info.title = 'changed by its owner';
    assert.notEqual(sharedBundledSpec('partner-v1').definition.info.title, 'changed by its owner');
  });

  it('keep their own handlers and routes: what one app registers, another does not see', async () => {
    const [first, second] = [await loadSurfaceContract('partner-v1'), await loadSurfaceContract('partner-v1')];
    assert.notEqual(first.api, second.api);
    first.api.register('getHealth', () => 'first');
    assert.equal(second.api.handlers['getHealth'], undefined);
    assert.notEqual(first.api.router, second.api.router);
  });
});
