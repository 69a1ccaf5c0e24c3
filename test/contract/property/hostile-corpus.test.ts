// The hostile corpus (test/contract/property/hostile-values.ts) over every input of every operation of both surfaces
// and of the OAuth endpoints: each request is a valid one with one parameter, one top-level body field or the whole
// body replaced by a hostile value. Whatever the value: no 5xx, a problem+json for a refusal on the API surfaces, and
// the event loop never blocked longer than the budget (test/support/event-loop-lag.ts). Bounded and seeded for CI; run
// longer by hand: PROPERTY_RUNS=500 PROPERTY_SEED=$RANDOM npm test -- --grep 'hostile corpus'
import assert from 'node:assert/strict';
import fc from 'fast-check';
import request from 'supertest';
import { withinEventLoopBudget } from '../../support/event-loop-lag.ts';
import { buildApp } from '../../support/partner-app.ts';
import { pkcePair, registerTestClient, TEST_REDIRECT_URI } from '../../support/oauth-flow.ts';
import type { Client } from '../../support/surfaces-under-test.ts';
import { describeEveryOperation } from './every-operation.ts';
import { HOSTILE_HEADER, HOSTILE_JSON, HOSTILE_WIRE } from './hostile-values.ts';
import {
  reachesOperation,
  toRequest,
  validInputs,
  validRequest,
  type Inputs,
  type OperationUnderTest,
  type Parameter,
} from './requests.ts';

const runs = Number(process.env.PROPERTY_RUNS ?? 15);
const seed = Number(process.env.PROPERTY_SEED ?? 20261123);
const parameters = { numRuns: runs, seed, endOnFailure: true };
/** Marks where the hostile value goes; plain letters, so that no encoding step changes it. */
const SLOT = 'hostileslot7f3a';

interface HostileRequest {
  method: OperationUnderTest['method'];
  url: string;
  headers: Record<string, string>;
  bodyText?: string;
  /** What was replaced, and by what. */
  broken: string;
}

type Slot = { parameter: Parameter } | { field: string } | { wholeBody: true };

function slotsOf(op: OperationUnderTest): Slot[] {
  const fields = Object.keys((op.body?.schema.properties ?? {}) as object).map((field) => ({ field }));
  return [
    ...op.parameters.map((parameter) => ({ parameter })),
    ...fields,
    ...(op.body ? [{ wholeBody: true as const }] : []),
  ];
}

function hostileRequest(op: OperationUnderTest): fc.Arbitrary<HostileRequest> | undefined {
  const slots = slotsOf(op);
  if (slots.length === 0) return undefined;
  return fc
    .tuple(validInputs(op), fc.constantFrom(...slots), fc.nat())
    .map(([inputs, slot, pick]) => withHostile(op, inputs, slot, pick));
}

/** A valid request with the value number `pick` of the slot's corpus in `slot`. */
function withHostile(op: OperationUnderTest, inputs: Inputs, slot: Slot, pick: number): HostileRequest {
  if ('parameter' in slot) {
    const { parameter } = slot;
    const corpus = parameter.in === 'header' ? HOSTILE_HEADER : HOSTILE_WIRE;
    const value = corpus[pick % corpus.length]!;
    inputs.params.set(parameter, SLOT);
    const base = toRequest(op, inputs);
    const headers = parameter.in === 'header' ? { ...base.headers, [parameter.name]: value } : base.headers;
    return {
      method: op.method,
      url: base.url.replace(SLOT, value),
      headers,
      ...bodyOf(base.body),
      broken: `${parameter.in} ${parameter.name} = ${value.slice(0, 60)}`,
    };
  }
  const value = HOSTILE_JSON[pick % HOSTILE_JSON.length]!;
  const base = toRequest(op, inputs);
  const body =
    'field' in slot ? { ...(typeof base.body === 'object' && base.body ? base.body : {}), [slot.field]: SLOT } : SLOT;
  const bodyText = JSON.stringify(body).replace(JSON.stringify(SLOT), value);
  return {
    method: op.method,
    url: base.url,
    headers: base.headers,
    bodyText,
    broken: `${'field' in slot ? `body.${slot.field}` : 'body'} = ${value.slice(0, 60)}`,
  };
}

/**
 * Every slot with each of the first values of its corpus (NUL, a NUL inside text, a lone surrogate): the values
 * that broke the service, tried everywhere on every run rather than left to sampling.
 */
function everySlotWithTheWorst(op: OperationUnderTest): HostileRequest[] {
  return slotsOf(op).flatMap((slot, s) =>
    [0, 1, 2].map((pick) =>
      withHostile(op, fc.sample(validInputs(op), { numRuns: 1, seed: seed + s * 3 + pick })[0]!, slot, pick),
    ),
  );
}

function bodyOf(body: unknown): { bodyText?: string } {
  return body === undefined ? {} : { bodyText: JSON.stringify(body) };
}

async function send({ app, credentials }: Client, hostile: HostileRequest) {
  let call = request(app)[hostile.method](hostile.url).set(hostile.headers).set(credentials);
  if (hostile.bodyText !== undefined) call = call.set('Content-Type', 'application/json').send(hostile.bodyText);
  return call;
}

function assertNoServerError(res: request.Response, hostile: { broken: string; url: string }) {
  assert.ok(
    res.status < 500,
    `${res.status} for ${hostile.broken} (${hostile.url.slice(0, 120)}): ${res.text.slice(0, 300)}`,
  );
}

describe(`hostile corpus (${runs} runs each, seed ${seed})`, () => {
  describeEveryOperation((op, under, client) => {
    const hostile = hostileRequest(op)?.filter(reachesOperation);
    if (!hostile) return;
    it(`${op.operationId}: no 5xx and no blocked event loop, whatever one input holds`, async () => {
      // Operations without security are limited per address: one app (fresh counters) for the whole run.
      const target = !op.secured && under.anonymous ? await under.anonymous() : client();
      // Warm: an operation's first request compiles its validators, once per process.
      const [warm] = fc.sample(validRequest(op), { numRuns: 1, seed });
      await send(target, { ...warm!, ...bodyOf(warm!.body), broken: 'nothing' });
      const check = async (req: HostileRequest) => {
        const res = await withinEventLoopBudget(req.broken, () => send(target, req));
        assertNoServerError(res, req);
        if (res.status >= 400)
          assert.match(
            String(res.headers['content-type']),
            /^application\/problem\+json/,
            `${res.status} for ${req.broken}`,
          );
      };
      for (const req of everySlotWithTheWorst(op).filter(reachesOperation)) await check(req);
      await fc.assert(fc.asyncProperty(hostile, check), parameters);
    });
  });

  describe('OAuth endpoints', () => {
    let app: Awaited<ReturnType<typeof buildApp>>;
    let base: Record<string, Record<string, string>>;
    before(async () => {
      app = await buildApp();
      const { client_id } = await registerTestClient(['tasks:read']);
      const { verifier, challenge } = pkcePair();
      const authorizeParams = {
        response_type: 'code',
        client_id,
        redirect_uri: TEST_REDIRECT_URI,
        scope: 'tasks:read',
        state: 's',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      };
      base = {
        'GET /oauth/authorize': authorizeParams,
        'POST /oauth/authorize': {
          ...authorizeParams,
          email: 'someone@example.com',
          password: 'not-the-password',
          decision: 'allow',
        },
        'POST /oauth/token': {
          grant_type: 'authorization_code',
          client_id,
          code: 'no-such-code',
          redirect_uri: TEST_REDIRECT_URI,
          code_verifier: verifier,
          refresh_token: 'x',
          scope: 'tasks:read',
        },
        'POST /oauth/revoke': {
          client_id,
          token: 'no-such-token',
          token_type_hint: 'refresh_token',
          client_secret: 'x',
        },
      };
    });

    for (const endpoint of [
      'GET /oauth/authorize',
      'POST /oauth/authorize',
      'POST /oauth/token',
      'POST /oauth/revoke',
    ]) {
      it(`${endpoint}: no 5xx and no blocked event loop, whatever one field holds`, async () => {
        const [method, path] = endpoint.split(' ') as ['GET' | 'POST', string];
        const fields = Object.keys(base[endpoint]!);
        const encoded = (params: Record<string, string>) => new URLSearchParams(params).toString();
        const call = (form: string, basic?: string) => {
          const authorization = basic ? { Authorization: `Basic ${basic}` } : {};
          return method === 'GET'
            ? request(app).get(`${path}?${form}`).set(authorization)
            : request(app).post(path).set(authorization).type('form').send(form);
        };
        await call(encoded(base[endpoint]!)); // warm
        const hostile = fc.record({
          field: fc.constantFrom(...fields, 'basic'),
          value: fc.constantFrom(...HOSTILE_WIRE),
        });
        const worst = [...fields, 'basic'].flatMap((field) =>
          HOSTILE_WIRE.slice(0, 3).map((value) => ({ field, value })),
        );
        await fc.assert(
          fc.asyncProperty(hostile, async ({ field, value }) => {
            const broken = `${field} = ${value.slice(0, 60)}`;
            const form = encoded(base[endpoint]!).replace(new RegExp(`(^|&)${field}=[^&]*`), `$1${field}=${value}`);
            // Basic credentials: the client id hostile, as the endpoints decode it (base64 of form-encoded parts).
            const basic = field === 'basic' ? Buffer.from(`${value}:secret`).toString('base64') : undefined;
            const res = await withinEventLoopBudget(broken, () => call(form, basic));
            assertNoServerError(res, { broken, url: path });
          }),
          { ...parameters, examples: worst.map((example) => [example] as [typeof example]) },
        );
      });
    }
  });
});
