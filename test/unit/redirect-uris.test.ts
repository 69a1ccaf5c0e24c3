import assert from 'node:assert/strict';
import { redirectUriProblem } from '../../server/oauth/clients.ts';

describe('redirectUriProblem (clients create)', () => {
  it('accepts https anywhere and http on loopback hosts only', () => {
    for (const uri of [
      'https://app.example/callback',
      'http://localhost:8080/callback',
      'http://127.0.0.1:8765/cb',
      'http://[::1]:9000/cb',
    ]) {
      assert.equal(redirectUriProblem(uri), undefined, uri);
    }
  });

  it('refuses a fragment, plain http across a network, other schemes and relative URIs', () => {
    assert.match(redirectUriProblem('https://app.example/cb#x')!, /fragment/);
    assert.match(redirectUriProblem('https://app.example/cb#')!, /fragment/);
    assert.match(redirectUriProblem('http://app.example/cb')!, /https unless its host is loopback/);
    assert.match(redirectUriProblem('http://localhost.evil.example/cb')!, /https unless/);
    assert.match(redirectUriProblem('ftp://app.example/cb')!, /absolute http\(s\) URL/);
    assert.match(redirectUriProblem('/callback')!, /absolute http\(s\) URL/);
  });
});
