// Every named example pair of both specs runs against a fresh instance seeded as `npm start` seeds one (reference
// data, the demo data of DEMO_SEED, the demo partner key and the demo student): the response has the documented
// status, matches the schema (contractClient) and equals the example but for the fields it says vary (`x-varies`).
// Contract testers send the pairs in their own order (Portman and Step CI in the spec's, Specmatic per operation),
// so the pairs also run in the spec's order, reversed and shuffled, each on a fresh instance: every pair must answer
// its status whatever ran before it (a DELETE removes only a record made to be deleted, a write changes nothing
// another example's status depends on). The exact bodies are compared in one order, reads before writes, the way a
// tester meets a fresh instance.
import assert from 'node:assert/strict';
import { PGlite } from '@electric-sql/pglite';
import { connect, embeddedDatabaseOf, PGLITE_OPTIONS, type Db } from '../../../db/connect.ts';
import { DEMO_SEED, seedDemo, seedReference } from '../../../db/seed/index.ts';
import { bundledSpecs } from '../../../server/contract/bundled-specs.ts';
import { issueApiKey } from '../../../server/auth/api-keys.ts';
import { createDemoStudent } from '../../../app/demo-student.ts';
import { memoryLimitStores, type LimitStores } from '../../../server/limits/rate-limits.ts';
import type { WindowCounter } from '../../../server/limits/window-counters.ts';
import { contractClient } from '../../support/contract.ts';
import { buildApp, testSecrets } from '../../support/partner-app.ts';
import { createFreshDatabase } from '../../support/test-db.ts';
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

/** What `npm start` makes in a new database, and the two secrets it prints once. */
async function startAsNew(db: Db): Promise<Record<string, string>> {
  const now = new Date();
  await seedReference(db, { now });
  await seedDemo(db, { seed: DEMO_SEED, now });
  return {
    'partner-v1': (await issueApiKey(db, { name: 'demo key (first start)' })).key,
    general: (await createDemoStudent(db, now, testSecrets)).key,
  };
}

type Instance = { db: Db; close(): Promise<void>; credentials: Record<string, string> };

/**
 * The fresh instances of the four runs. On PostgreSQL each is a new database started as `npm start` starts one. On the
 * embedded database that start is made once: the first run takes that database, and each later run a copy of its data
 * directory as it was before any request (PGlite loads one like the test databases' template), the same rows and the
 * same two secrets, without paying for the reference data, the demo data and the secrets again.
 */
let embeddedStart:
  | Promise<{ first: Instance | undefined; dump: Blob; credentials: Record<string, string> }>
  | undefined;
async function newInstance(): Promise<Instance> {
  if (process.env.DATABASE_URL) {
    const database = await createFreshDatabase();
    return { db: database.db, close: () => database.close(), credentials: await startAsNew(database.db) };
  }
  embeddedStart ??= (async () => {
    const database = await createFreshDatabase();
    const credentials = await startAsNew(database.db);
    const dump = await embeddedDatabaseOf(database.db)!.dumpDataDir('none');
    return { first: { db: database.db, close: () => database.close(), credentials }, dump, credentials };
  })();
  const start = await embeddedStart;
  const first = start.first;
  if (first) {
    start.first = undefined;
    return first;
  }
  const db = connect({ pglite: new PGlite('memory://', { ...PGLITE_OPTIONS, loadDataDir: start.dump }) });
  return { db, close: () => db.destroy(), credentials: start.credentials };
}

/** A fresh instance as `npm start` makes one, with the two secrets it prints once. */
function freshInstance() {
  let instance: Instance;
  let api: ReturnType<typeof contractClient>;
  let credentials: Record<string, string> = {};
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
    instance = await newInstance();
    credentials = instance.credentials;
    // As testers run an instance (scripts/contract-tools/run.sh): the webhook registration's example names a
    // documentation host that resolves nowhere, which only WEBHOOK_ALLOW_PRIVATE_TARGETS lets register.
    api = contractClient(await buildApp({ db: instance.db, limitStores, allowPrivateWebhookTargets: true }));
  });
  after(async () => {
    await instance?.close();
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
