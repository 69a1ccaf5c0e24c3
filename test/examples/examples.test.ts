// Every named example pair of both specs runs against a fresh instance seeded as `npm start` seeds one (reference
// data, the demo data of DEMO_SEED, the demo partner key and the demo student): the response has the documented
// status, matches the schema (contractClient) and equals the example but for the fields it says vary (`x-varies`).
// Reads run before writes, the way a tester meets a fresh instance; creates send their own Idempotency-Key.
import assert from 'node:assert/strict';
import { DEMO_SEED, seedDemo, seedReference } from '../../db/seed/index.ts';
import { bundledSpecs } from '../../server/contract/bundled-specs.ts';
import { issueApiKey } from '../../server/auth/api-keys.ts';
import { createDemoStudent } from '../../app/demo-student.ts';
import { memoryLimitStores, type LimitStores } from '../../server/limits/rate-limits.ts';
import type { WindowCounter } from '../../server/limits/window-counters.ts';
import { contractClient } from '../support/contract.ts';
import { buildApp } from '../support/partner-app.ts';
import { createFreshDatabase, type TestDatabase } from '../support/test-db.ts';
import { examplePairs, withoutVarying, type ExamplePair } from './example-pairs.ts';

const ORDER = ['get', 'post', 'put', 'patch', 'delete'];
const specs = bundledSpecs().map(({ surface, definition }) => ({ surface, ...examplePairs(definition) }));

describe('spec examples on a fresh instance', () => {
  let database: TestDatabase;
  let api: ReturnType<typeof contractClient>;
  const credentials: Record<string, string> = {};
  // The limits of a fresh instance apply per minute; the run sends more than a minute's worth, so each pair
  // starts with fresh counters, as a tester pacing the examples would see: every limiter counts in the counters of
  // `fresh`, replaced before each pair.
  let fresh = memoryLimitStores();
  const limitStores: LimitStores = {
    ...memoryLimitStores(),
    counter: (scope, windows, onFailure) => {
      const made = new WeakMap<LimitStores, WindowCounter>();
      const current = () => {
        let counter = made.get(fresh);
        if (!counter) made.set(fresh, (counter = fresh.counter(scope, windows, onFailure)));
        return counter;
      };
      return {
        hit: (keys, limits) => current().hit(keys, limits),
        giveBack: (keys, counted) => current().giveBack(keys, counted),
      };
    },
  };

  before(async function () {
    this.timeout(180_000);
    database = await createFreshDatabase();
    const now = new Date();
    await seedReference(database.db, { now });
    await seedDemo(database.db, { seed: DEMO_SEED, now });
    // The two secrets `npm start` prints once, made the same way.
    credentials['partner-v1'] = (await issueApiKey(database.db, { name: 'demo key (first start)' })).key;
    credentials.general = (await createDemoStudent(database.db, now)).key;
    api = contractClient(await buildApp({ db: database.db, limitStores }));
  });
  after(async () => {
    await database?.close();
  });

  for (const { surface, pairs, missing } of specs) {
    it(`pairs every response example of ${surface} with a complete request example of the same name`, () => {
      assert.deepEqual(missing, []);
      assert.ok(pairs.length > 0);
    });
  }

  // Across both surfaces: every read sees the instance as it was started (a create would change the stats).
  const ordered = specs.flatMap(({ surface, pairs }) => pairs.map((pair) => ({ surface, pair })));
  ordered.sort((a, b) => ORDER.indexOf(a.pair.request.method) - ORDER.indexOf(b.pair.request.method));
  for (const { surface, pair } of ordered) {
    it(`${surface} ${pair.operationId} ${pair.status} ${pair.name}: ${pair.request.method.toUpperCase()} ${pair.request.path}`, async () => {
      fresh = memoryLimitStores();
      const res = await send(pair, credentials[surface]!);
      assert.equal(res.status, pair.status, `answered ${res.status}: ${JSON.stringify(res.body)}`);
      if (String(res.headers['content-type']).startsWith('text/event-stream')) return; // the schema check covers streams
      assert.deepEqual(withoutVarying(res.body, pair.varies), withoutVarying(pair.expected, pair.varies), `actual body: ${JSON.stringify(res.body)}`);
    });
  }

  function send(pair: ExamplePair, key: string) {
    const { method, path, query, headers, body } = pair.request;
    let request = api[method as 'get'](path).query(query as Record<string, string>).set(headers);
    if (pair.secured) request = request.set('X-Service-API-Key', key);
    return body === undefined ? request : request.send(body as object);
  }
});
