// Every named example pair of both specs runs against a fresh instance seeded as `npm start` seeds one (reference
// data, the demo data of DEMO_SEED, the demo partner key and the demo student): the response has the documented
// status, matches the schema (contractClient) and equals the example but for the fields it says vary (`x-varies`).
// Contract testers send the pairs in their own order (Portman and Step CI in the spec's, Specmatic per operation),
// so the pairs also run in the spec's order, reversed and shuffled, each on a fresh instance: every pair must answer
// its status whatever ran before it (a DELETE removes only a record made to be deleted, a write changes nothing
// another example's status depends on). The exact bodies are compared in one order, reads before writes, the way a
// tester meets a fresh instance.
import assert from 'node:assert/strict';
import { DEMO_SEED, seedDemo, seedReference } from '../../../db/seed/index.ts';
import { bundledSpecs } from '../../../server/contract/bundled-specs.ts';
import { issueApiKey } from '../../../server/auth/api-keys.ts';
import { createDemoStudent } from '../../../app/demo-student.ts';
import { memoryLimitStores, type LimitStores } from '../../../server/limits/rate-limits.ts';
import type { WindowCounter } from '../../../server/limits/window-counters.ts';
import { contractClient } from '../../support/contract.ts';
import { buildApp, testSecrets } from '../../support/partner-app.ts';
import { createFreshDatabase, type TestDatabase } from '../../support/test-db.ts';
import { examplePairs, withoutVarying, type ExamplePair } from './example-pairs.ts';

const METHOD_ORDER = ['get', 'post', 'put', 'patch', 'delete'];
const specs = bundledSpecs().map(({ surface, definition }) => ({ surface, ...examplePairs(definition) }));
type Run = { surface: string; pair: ExamplePair };
const inSpecOrder: Run[] = specs.flatMap(({ surface, pairs }) => pairs.map((pair) => ({ surface, pair })));

/** The same shuffle on every run (mulberry32), so a failure can be replayed. */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let state = seed;
  const random = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** A fresh instance as `npm start` makes one, with the two secrets it prints once. */
function freshInstance() {
  let database: TestDatabase;
  let api: ReturnType<typeof contractClient>;
  const credentials: Record<string, string> = {};
  // The limits of a fresh instance apply per minute; a run sends more than a minute's worth, so each pair starts
  // with fresh counters, as a tester pacing the examples would see: every limiter counts in the counters of `fresh`,
  // replaced before each pair.
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
        take: (keys, limits, count) => current().take(keys, limits, count),
      };
    },
  };

  before(async function () {
    this.timeout(180_000);
    database = await createFreshDatabase();
    const now = new Date();
    await seedReference(database.db, { now });
    await seedDemo(database.db, { seed: DEMO_SEED, now });
    credentials['partner-v1'] = (await issueApiKey(database.db, { name: 'demo key (first start)' })).key;
    credentials.general = (await createDemoStudent(database.db, now, testSecrets)).key;
    // As testers run an instance (scripts/contract-tools/run.sh): the webhook registration's example names a
    // documentation host that resolves nowhere, which only WEBHOOK_ALLOW_PRIVATE_TARGETS lets register.
    api = contractClient(await buildApp({ db: database.db, limitStores, allowPrivateWebhookTargets: true }));
  });
  after(async () => {
    await database?.close();
  });

  /** Sends the pair's request; the contract client checks the response against the spec. */
  return async ({ surface, pair }: Run) => {
    fresh = memoryLimitStores();
    const { method, path, query, headers, body } = pair.request;
    let request = api[method as 'get'](path)
      .query(query as Record<string, string>)
      .set(headers);
    if (pair.secured) request = request.set('X-Service-API-Key', credentials[surface]!);
    const res = await (body === undefined ? request : request.send(body as object));
    assert.equal(res.status, pair.status, `answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res;
  };
}

const title = ({ surface, pair }: Run) =>
  `${surface} ${pair.operationId} ${pair.status} ${pair.name}: ${pair.request.method.toUpperCase()} ${pair.request.path}`;

describe('spec examples on a fresh instance', () => {
  for (const { surface, pairs, missing } of specs) {
    it(`pairs every response example of ${surface} with a complete request example of the same name`, () => {
      assert.deepEqual(missing, []);
      assert.ok(pairs.length > 0);
    });
  }

  describe('reads before writes: each answers its example', () => {
    const send = freshInstance();
    // Across both surfaces: every read sees the instance as it was started (a create would change the stats).
    const ordered = [...inSpecOrder].sort(
      (a, b) => METHOD_ORDER.indexOf(a.pair.request.method) - METHOD_ORDER.indexOf(b.pair.request.method),
    );
    for (const run of ordered) {
      it(title(run), async () => {
        const res = await send(run);
        if (run.pair.bodyless) return assert.equal(res.text ?? '', '');
        if (String(res.headers['content-type']).startsWith('text/event-stream')) return; // the schema check covers streams
        const { expected, varies } = run.pair;
        assert.deepEqual(
          withoutVarying(res.body, varies),
          withoutVarying(expected, varies),
          `actual body: ${JSON.stringify(res.body)}`,
        );
      });
    }
  });

  const orders: Array<[string, Run[]]> = [
    ["the spec's order", inSpecOrder],
    ['reverse order', [...inSpecOrder].reverse()],
    ['a shuffled order (seed 25)', shuffled(inSpecOrder, 25)],
  ];
  for (const [name, runs] of orders) {
    describe(`in ${name}: each answers its status`, () => {
      const send = freshInstance();
      for (const run of runs) it(title(run), async () => void (await send(run)));
    });
  }
});
