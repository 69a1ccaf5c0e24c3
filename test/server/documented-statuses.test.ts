// The statuses every operation documents for reasons outside its own input: a method the path lacks (405), a body
// over the limit (413), a spent limit (429), a fault of ours (500), a database that is down (503). Each is provoked
// for real, for every operation of every surface that documents it, so the contract coverage check sees them exercised.
// Every GET operation is also asked with HEAD, which must answer alike without the body.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { connect, type Db } from '../../db/connect.ts';
import { surfaces } from '../../server/contract/surfaces.ts';
import { testDatabase } from '../support/shared-database.ts';
import {
  operationsOf,
  validRequest,
  type GeneratedRequest,
  type OperationUnderTest,
} from '../contract/property/requests.ts';
import { contractClient } from '../support/contract.ts';
import { withProviderSignature } from '../support/payment-provider.ts';
import { ROOMY, surfacesUnderTest, type Client } from '../support/surfaces-under-test.ts';

const OTHER_METHODS = ['post', 'put', 'patch', 'delete', 'get'] as const;
const BODY_LIMIT = 100 * 1024; // buildApp's bodyLimitBytes
/** Headers that describe a GET's representation, which the answer to a HEAD must repeat. */
const REPRESENTATION_HEADERS = ['content-type', 'content-length', 'cache-control', 'ratelimit-policy'];

/**
 * One valid request for the operation (fixed seed: the same request every run), with the spec's first named body
 * example when it has one, so that rules beyond the schema (a real time zone, say) hold too.
 */
function sampleRequest(op: OperationUnderTest, spec: any): GeneratedRequest {
  const request = fc.sample(validRequest(op), { numRuns: 1, seed: 7 })[0]!;
  const examples = spec.paths[op.pathTemplate][op.method].requestBody?.content?.['application/json']?.examples;
  const example = examples && (Object.values(examples)[0] as { value?: unknown }).value;
  return example === undefined ? request : { ...request, body: example };
}

function send({ app, credentials }: Client, request: GeneratedRequest, op: OperationUnderTest) {
  const payload = request.body === undefined ? undefined : JSON.stringify(request.body);
  const call = contractClient(app)
    [request.method](request.url)
    .set(withProviderSignature(op, request, payload))
    .set(credentials);
  return payload === undefined ? call : call.set('Content-Type', 'application/json').send(payload);
}

describe('documented statuses outside the input', () => {
  // A PostgreSQL URL whose port nothing listens on: the real driver, failing the way an unreachable server fails.
  let downDb: Db;
  // The test database with every query aimed at a schema that does not exist: the way a bug of ours fails (a
  // relation missing, say), which must stay a 500, unlike a dependency that is down.
  let faultyDb: Db;
  before(() => {
    downDb = connect({ databaseUrl: 'postgres://postgres@127.0.0.1:1/unreachable' });
    faultyDb = testDatabase().db.withSchema('no_such_schema');
  });
  after(() => downDb.destroy());

  for (const surface of surfaces) {
    const under = surfacesUnderTest[surface];
    if (!under) continue; // test/contract/property/spec-driven.test.ts fails for a surface without an entry
    const spec = JSON.parse(readFileSync(new URL(`../../generated/${surface}/openapi.json`, import.meta.url), 'utf8'));
    describe(surface, () => {
      // Credentials are costly on some surfaces (a sign-in), so one client serves every test but the 429s.
      let shared: Client;
      let onDownDb: Client;
      let onFaultyDb: Client;
      before(async () => {
        shared = await under.client(ROOMY);
        onDownDb = await under.client(ROOMY, downDb);
        onFaultyDb = await under.client(ROOMY, faultyDb);
      });
      for (const op of operationsOf(spec)) {
        const documents = (status: number) => String(status) in spec.paths[op.pathTemplate][op.method].responses;
        const anonymous = !op.secured && under.anonymous;
        const roomy = (db?: Db) => (db === downDb ? onDownDb : db === faultyDb ? onFaultyDb : shared);
        const clientFor = async (perMinute: number, db?: Db) =>
          anonymous ? under.anonymous!(db) : perMinute === ROOMY ? roomy(db) : under.client(perMinute, db);
        describe(op.operationId, () => {
          if (documents(405)) {
            it('405 with Allow for a method its path lacks', async () => {
              const methods = Object.keys(spec.paths[op.pathTemplate]);
              const other = OTHER_METHODS.find((m) => !methods.includes(m))!;
              const { app, credentials } = await clientFor(ROOMY);
              const res = await contractClient(app)[other](sampleRequest(op, spec).url).set(credentials).expect(405);
              assert.equal(res.body.code, 'method_not_allowed');
              const allowed = String(res.headers['allow']).split(', ');
              assert.ok(allowed.includes(op.method.toUpperCase()), `Allow: ${res.headers['allow']}`);
              if (op.method === 'get') assert.ok(allowed.includes('HEAD'), `Allow: ${res.headers['allow']}`);
            });
          }

          if (op.method === 'get') {
            // RFC 9110 §9.3.2: HEAD works wherever GET does, with the GET's status and headers and no body.
            it('HEAD answers like GET, without the body', async () => {
              const request = sampleRequest(op, spec);
              const api = contractClient(shared.app);
              const get = await api.get(request.url).set(request.headers).set(shared.credentials);
              const head = await api.head(request.url).set(request.headers).set(shared.credentials);
              assert.equal(head.status, get.status, `GET ${get.status}: ${JSON.stringify(get.body)}`);
              for (const name of REPRESENTATION_HEADERS) assert.equal(head.headers[name], get.headers[name], name);
              assert.equal(head.text, undefined, 'a HEAD response has no body');
            });
          }

          if (documents(413)) {
            it('413 for a body over the limit, before reading it', async () => {
              const { app, credentials } = await clientFor(ROOMY);
              const request = sampleRequest(op, spec);
              const res = await contractClient(app)
                [op.method](request.url)
                .set(credentials)
                .set('Content-Type', 'application/json')
                .send(`"${'x'.repeat(BODY_LIMIT)}"`)
                .expect(413);
              assert.equal(res.body.code, 'payload_too_large');
            });
          }

          if (documents(429)) {
            it('429 with Retry-After once its limit is spent', async () => {
              const client = await clientFor(1);
              const request = sampleRequest(op, spec);
              let res = await send(client, request, op);
              for (let i = 0; i < 20 && res.status !== 429; i++) res = await send(client, request, op);
              assert.equal(res.status, 429, `still ${res.status} after 21 requests`);
              assert.equal(res.body.code, 'rate_limited');
              assert.match(String(res.headers['retry-after']), /^\d+$/);
            });
          }

          if (documents(500)) {
            it('500 problem+json when a query fails for a reason of ours', async () => {
              const res = await send(await clientFor(ROOMY, faultyDb), sampleRequest(op, spec), op);
              assert.equal(res.status, 500, `${res.status} ${res.body?.code}: ${res.body?.detail}`);
              assert.equal(res.body.code, 'internal_error');
            });
          }

          if (documents(503)) {
            it('503 problem+json with Retry-After when the database is down', async () => {
              const res = await send(await clientFor(ROOMY, downDb), sampleRequest(op, spec), op);
              assert.equal(res.status, 503, `${res.status} ${res.body?.code}: ${res.body?.detail}`);
              assert.equal(res.body.code, 'service_unavailable');
              assert.match(String(res.headers['retry-after']), /^\d+$/);
            });
          }
        });
      }
    });
  }
});
