// Spec-driven property tests: for every operation of every surface, requests generated from the spec's schemas.
//   - valid input gets a documented status, never a 5xx (the contract client checks status, body and headers);
//   - input with one thing wrong gets a 4xx problem+json, never a 5xx;
//   - without credentials, a secured operation answers 401 whatever the input.
// Bounded and seeded for CI; run longer by hand: PROPERTY_RUNS=2000 PROPERTY_SEED=$RANDOM npm test -- --grep
// spec-driven
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { surfaces } from '../../../server/contract/surfaces.ts';
import { contractClient } from '../../support/contract.ts';
import { surfacesUnderTest, type Client } from '../../support/surfaces-under-test.ts';
import { describeEveryOperation } from './every-operation.ts';
import { withProviderSignature } from '../../support/payment-provider.ts';
import {
  invalidRequest,
  reachesAuthentication,
  validRequest,
  type GeneratedRequest,
  type OperationUnderTest,
} from './requests.ts';

const runs = Number(process.env.PROPERTY_RUNS ?? 20);
const seed = Number(process.env.PROPERTY_SEED ?? 20261122);
const parameters = { numRuns: runs, seed, endOnFailure: true };

async function send(
  client: Client | (() => Promise<Client>),
  op: OperationUnderTest,
  request: GeneratedRequest,
  withCredentials = true,
) {
  const { app, credentials } = typeof client === 'function' ? await client() : client;
  // As JSON text, so that scalars and null are sent as JSON too.
  const payload = request.body === undefined ? undefined : JSON.stringify(request.body);
  let call = contractClient(app)
    [request.method](request.url)
    .set(withCredentials ? withProviderSignature(op, request, payload) : request.headers);
  if (withCredentials) call = call.set(credentials);
  if (payload !== undefined) call = call.set('Content-Type', 'application/json').send(payload);
  return call;
}

describe(`spec-driven properties (${runs} runs each, seed ${seed})`, () => {
  it('has a way to call every surface', () => {
    const missing = surfaces.filter((surface) => !surfacesUnderTest[surface]);
    assert.deepEqual(missing, [], `add an entry for ${missing.join(', ')} to test/support/surfaces-under-test.ts`);
  });

  describeEveryOperation((op, under, client) => {
    describe(op.operationId, () => {
      const target = () => (!op.secured && under.anonymous ? under.anonymous.bind(under) : client());
      it('answers valid input with a documented success or refusal, never a 5xx', async () => {
        await fc.assert(
          fc.asyncProperty(validRequest(op), async (request) => {
            const res = await send(target(), op, request);
            assert.ok(res.status < 500, `${res.status} for ${JSON.stringify(request)}`);
            // A 400 can still be right: rules the schema cannot state (an IANA time zone name, say) are the handler's.
            // So can a per-account bound the generated requests reach (ten wrong current passwords, say); the client's
            // rate limit is roomy, so `rate_limited` never is.
            const refusedByLimits = res.status === 429 && res.body?.code === 'rate_limited';
            assert.ok(
              res.status !== 401 && !refusedByLimits,
              `valid input refused with ${res.status} ${res.body?.code}: ${res.body?.detail} (${JSON.stringify(request)})`,
            );
          }),
          parameters,
        );
      });

      const invalid = invalidRequest(op);
      if (invalid) {
        it('answers input with one thing wrong with 4xx problem+json, never a 5xx', async () => {
          await fc.assert(
            fc.asyncProperty(invalid, async (request) => {
              const res = await send(target(), op, request);
              assert.ok(res.status >= 400 && res.status < 500, `${res.status} for ${request.broken} (${request.url})`);
              assert.ok(
                ![401, 429].includes(res.status),
                `${res.status} for ${request.broken}: the credentials are valid`,
              );
              assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
            }),
            parameters,
          );
        });
      }

      if (op.secured) {
        it('answers 401 without credentials, whatever the input', async () => {
          const anyRequest = (invalid ? fc.oneof(validRequest(op), invalid) : validRequest(op)).filter(
            reachesAuthentication,
          );
          await fc.assert(
            fc.asyncProperty(anyRequest, async (request) => {
              const res = await send(client(), op, request, false);
              assert.equal(res.status, 401, `${res.status} for ${JSON.stringify(request)}`);
              assert.equal(res.body.code, 'unauthorized');
            }),
            parameters,
          );
        });
      }
    });
  });
});
