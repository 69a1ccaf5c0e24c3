// Contract coverage counts webhook event kinds: a documented kind no test produced is reported as a gap.
import assert from 'node:assert/strict';
import { eventKindCoverage, gapMessage } from '../support/coverage.ts';
import { documentedEventTypes } from '../support/event-contract.ts';

describe('contract coverage of webhook event kinds', () => {
  it('reports each documented kind no test produced, and none when all were', () => {
    const documented = documentedEventTypes();
    assert.ok(documented.includes('task.completed') && documented.includes('payment.succeeded'));
    const partial = eventKindCoverage(documented, new Set(documented.filter((t) => t !== 'user.warned')));
    assert.deepEqual(
      partial.filter((e) => !e.produced).map((e) => e.type),
      ['user.warned'],
    );
    assert.match(
      gapMessage([], partial)!,
      /webhook event kinds no test produced and checked against the spec: user\.warned$/,
    );
    assert.equal(gapMessage([], eventKindCoverage(documented, new Set(documented))), undefined);
  });
});
