// HEAD works wherever GET does (RFC 9110 §9.3.2): for every GET operation of every surface, the same request sent as
// HEAD gets the GET's status and headers and no body; 405s name HEAD in Allow.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { surfaces } from '../../scripts/surfaces.ts';
import { operationsOf, validRequest } from '../property/requests.ts';
import { contractClient } from '../support/contract.ts';
import { ROOMY, surfacesUnderTest, type Client } from '../support/surfaces-under-test.ts';

/** Headers that describe the representation, which HEAD must report as GET does. */
const REPRESENTATION_HEADERS = ['content-type', 'content-length', 'cache-control', 'ratelimit-policy'];

describe('HEAD on every GET operation', () => {
  for (const surface of surfaces) {
    const under = surfacesUnderTest[surface];
    if (!under) continue;
    const spec = JSON.parse(readFileSync(new URL(`../../generated/${surface}/openapi.json`, import.meta.url), 'utf8'));
    describe(surface, () => {
      let client: Client;
      before(async () => {
        client = await under.client(ROOMY);
      });
      for (const op of operationsOf(spec).filter((o) => o.method === 'get')) {
        it(`${op.operationId}: same status and headers as GET, no body`, async () => {
          const request = fc.sample(validRequest(op), { numRuns: 1, seed: 7 })[0]!;
          const api = contractClient(client.app);
          const get = await api.get(request.url).set(request.headers).set(client.credentials);
          const head = await api.head(request.url).set(request.headers).set(client.credentials);
          assert.equal(head.status, get.status, `GET ${get.status}: ${JSON.stringify(get.body)}`);
          for (const name of REPRESENTATION_HEADERS) assert.equal(head.headers[name], get.headers[name], name);
          assert.equal(head.text, undefined, 'a HEAD response has no body');
        });
      }
    });
  }

  it('lists HEAD in the Allow header of a 405 wherever GET is allowed', async () => {
    const { app, credentials } = await surfacesUnderTest['partner-v1']!.client(ROOMY);
    const res = await contractClient(app).post('/api/v1/universities').set(credentials).expect(405);
    assert.equal(res.headers.allow, 'GET, HEAD');
  });
});
