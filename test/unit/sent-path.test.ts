// The contract check of test responses judges a request by the path it was sent to: a path parameter of `.` or `..`
// (which the property tests generate) must reach the operation it names, as it reaches the server.
import assert from 'node:assert/strict';
import { sentPath } from '../support/contract.ts';

describe('sentPath (the contract check of test responses)', () => {
  it('keeps `.` and `..` segments as they were sent', () => {
    assert.equal(sentPath('/api/v1/tasks/.'), '/api/v1/tasks/.');
    assert.equal(sentPath('/api/v1/tasks/..'), '/api/v1/tasks/..');
    assert.equal(sentPath('/api/v1/tasks/./attempts'), '/api/v1/tasks/./attempts');
  });

  it('cuts off the query and keeps percent-encoding as sent', () => {
    assert.equal(sentPath('/api/v1/tasks/a%2Fb?limit=1&x=.'), '/api/v1/tasks/a%2Fb');
    assert.equal(sentPath('/api/v1/tasks?'), '/api/v1/tasks');
  });
});
