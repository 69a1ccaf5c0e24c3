// The bench's sync push against its twin (issue 38): the push's 100 commands are the twin's single write 100 times,
// each with a uuid the load generator makes new per request, and the push is judged per command against the twin's
// CPU per request in the same rounds (scripts/bench/report.ts).
import assert from 'node:assert/strict';
import { missedTargets, type ScenarioSummary, type Summary, type TargetProfile } from '../../scripts/bench/report.ts';
import { FRESH_UUID_MARK, SYNC_PUSH_COMMANDS, scenarios, type Measurement } from '../../scripts/bench/scenarios.ts';

describe("the bench's sync push and its twin", () => {
  it('pushes the twin’s write as commands whose uuids are marked to be made new per request', () => {
    const all = scenarios(2026);
    const push = all.find((s) => s.name === `sync-push-${SYNC_PUSH_COMMANDS}`)!;
    const twin = all.find((s) => s.name === push.twin)!;
    assert.equal(twin.name, 'single-writes-100');
    assert.deepEqual([twin.method, twin.path, twin.expectedStatus], ['POST', '/api/tasks', 201]);
    const { commands } = push.body as { commands: Array<{ uuid: string; type: string; args: unknown }> };
    assert.equal(commands.length, push.commands);
    assert.equal(new Set(commands.map((c) => c.uuid)).size, SYNC_PUSH_COMMANDS);
    for (const command of commands) {
      assert.ok(command.uuid.startsWith(FRESH_UUID_MARK));
      assert.equal(command.type, 'task_add');
      assert.deepEqual(command.args, twin.body);
    }
    assert.equal(push.freshUuids, true);
  });

  const measured = (cpuUsPerRequest: number): Measurement => ({
    requests: 10,
    requestsPerSec: 10,
    latencyMs: { p50: 1, p99: 2 },
    cpuUsPerRequest,
    statuses: { 200: 10 },
    failures: [],
  });
  const pushed = (twinRatio: number | undefined): ScenarioSummary => ({
    name: 'sync-push-100',
    method: 'POST',
    path: '/api/sync/commands',
    expectedStatus: 200,
    service: measured(90_000),
    baseline: measured(300),
    cpuRatio: 300,
    cpuRatioRange: [300, 300],
    throughputRatio: 0.01,
    commands: 100,
    twinName: 'single-writes-100',
    ...(twinRatio === undefined ? {} : { twin: measured(1000), twinRatio, twinRatioRange: [twinRatio, twinRatio] }),
  });
  const summary = (scenario: ScenarioSummary) =>
    ({
      engine: 'pglite',
      startup: { firstStartMs: 1, firstStartRssMb: 1, restartMs: 1, restartRssMb: 1 },
      rss: { afterStartMb: 1, peakMb: 1 },
      scenarios: [scenario],
    }) as unknown as Summary;
  const profile: TargetProfile = { maxRssMb: 600, scenarios: { 'sync-push-100': { maxTwinRatio: 1 } } };

  it('judges the push per command against its twin, and counts a twin that did not run as a miss', () => {
    assert.deepEqual(missedTargets(summary(pushed(0.9)), profile), []);
    assert.deepEqual(missedTargets(summary(pushed(1.05)), profile), [
      "sync-push-100: CPU/command 1.05× single-writes-100's > max 1×",
    ]);
    assert.deepEqual(missedTargets(summary(pushed(undefined)), profile), ['sync-push-100: its twin did not run']);
  });
});
