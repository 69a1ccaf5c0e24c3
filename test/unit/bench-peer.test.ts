// The bench's yardstick for writes (scripts/bench/peer.ts) does the durable work the performance document says it does:
// a review it acknowledged is committed (it survives the peer's kill -9), with the card moved by SM-2, and a key it
// does not know gets 401; and bench/targets.json's peer ratios are judged (scripts/bench/report.ts). The peer runs on
// PostgreSQL only, as the bench runs it.
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { insertCard, insertDeck } from '../../db/queries/flashcards.ts';
import { createPeerSchema } from '../../scripts/bench/peer-schema.ts';
import { startHttpProcess, type Started } from '../../scripts/bench/processes.ts';
import { missedTargets, type ScenarioSummary, type Summary, type TargetProfile } from '../../scripts/bench/report.ts';
import type { Measurement } from '../../scripts/bench/scenarios.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-db.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));

describe("the bench's naive peer", () => {
  let database: TestDatabase | undefined;
  let peer: Started | undefined;
  let client: pg.Client | undefined;

  before(async function () {
    if (!process.env.DATABASE_URL) this.skip();
    database = await createTestDatabase();
  });

  after(async () => {
    peer?.child.kill('SIGKILL');
    await client?.end();
    await database?.close();
  });

  it('answers a review only once it is committed, and refuses a key it does not know', async () => {
    const url = database!.url!;
    const { db } = database!;
    const student = await db.selectFrom('users').select('id').limit(1).executeTakeFirstOrThrow();
    const now = new Date();
    const deckId = await insertDeck(db, { user_id: student.id, title: 'Anatomy' }, now);
    const card = await insertCard(db, { user_id: student.id, deck_id: deckId, front: 'Femur', back: 'Thigh' }, now);
    await createPeerSchema(url, [{ token: 'a-token', studentId: student.id }]);
    peer = await startHttpProcess(['--import', 'tsx', 'scripts/bench/peer.ts'], {
      env: { ...process.env, DATABASE_URL: url },
      readyPath: '/',
      deadlineMs: 30_000,
      cwd: root,
    });
    const review = (token: string) =>
      fetch(`${peer!.baseUrl}/api/flashcards/cards/${card.id}/reviews`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ grade: 2 }),
      });
    assert.equal((await review('another-token')).status, 401);
    const answered = await review('a-token');
    assert.equal(answered.status, 201);
    const body = (await answered.json()) as { id: string; interval_days: number; repetitions: number };
    peer.child.kill('SIGKILL');

    client = new pg.Client({ connectionString: url });
    await client.connect();
    const logged = await client.query('select grade from peer.reviews where id = $1', [body.id]);
    assert.deepEqual(logged.rows, [{ grade: 2 }]);
    // A failed recall restarts the card (SM-2): the update was committed with the review.
    const moved = await client.query('select repetitions, interval_days from peer.cards where id = $1', [card.id]);
    assert.deepEqual(moved.rows, [{ repetitions: 0, interval_days: 1 }]);
  });
});

describe("the bench's targets against the peer", () => {
  const measured = (cpuUsPerRequest: number): Measurement => ({
    requests: 100,
    requestsPerSec: 100,
    latencyMs: { p50: 1, p99: 2 },
    cpuUsPerRequest,
    statuses: { 201: 100 },
    failures: [],
  });
  const write = (peerRatio: number | undefined): ScenarioSummary => ({
    name: 'create-task',
    method: 'POST',
    path: '/api/tasks',
    expectedStatus: 201,
    service: measured(1300),
    baseline: measured(100),
    cpuRatio: 13,
    cpuRatioRange: [12, 14],
    throughputRatio: 0.1,
    ...(peerRatio === undefined ? {} : { peer: measured(1000), peerRatio, peerRatioRange: [peerRatio, peerRatio] }),
  });
  const summary = (scenario: ScenarioSummary) =>
    ({
      engine: 'postgresql',
      startup: { firstStartMs: 1, firstStartRssMb: 1, restartMs: 1, restartRssMb: 1 },
      rss: { afterStartMb: 1, peakMb: 1 },
      scenarios: [scenario],
    }) as unknown as Summary;
  const profile: TargetProfile = { maxRssMb: 600, scenarios: { 'create-task': { maxPeerRatio: 1.25 } } };

  it('judges a write by its ratio to the peer, not to bare Express', () => {
    assert.deepEqual(missedTargets(summary(write(1.2)), profile), []);
    const missed = missedTargets(summary(write(1.3)), profile);
    assert.deepEqual(missed, ['create-task: CPU/request 1.3× the naive peer > max 1.25×']);
  });

  it('counts a write whose peer did not run as a miss', () => {
    assert.deepEqual(missedTargets(summary(write(undefined)), profile), ['create-task: the naive peer did not run']);
  });
});
