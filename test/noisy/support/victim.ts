// The victim's side of a scenario and its verdict. The victim keeps a light, open-loop load (a request every
// INTERVAL_MS whatever the previous one is doing, so a stalled server shows as many slow requests rather than a
// paused load): its task list, its daily loop, and a partner's read of /api/v1 with the partner key; a probe reads
// /livez meanwhile. The scenario measures the victim's baseline first, then runs the attack (which ends when the
// attacker stops), then watches the victim return to its baseline.
//
// The bounds are generous on purpose: the machine that runs the suite has 2 cores shared with other work, so a
// latency a few times the baseline can be noise; what the suite catches is a service that one account can take
// from the others (503s, requests of seconds, a frozen event loop, a victim that stays slow after the attack). The
// machine's own noise is measured too, on a control server in a process of its own probed beside /livez: its extra
// delay under attack is added to the victim's p99 bound, and a slow /livez probe whose control probe was as slow is a
// stall of the machine, not of the service. The control, a
// process that needs almost no CPU, is not slowed as much as the server is by a loaded machine (the scheduler favours
// a process that sleeps), so a /livez probe is also weighed by the server's CPU time while it waited, as
// event-loop-lag.ts weighs a stretch: the loop cannot have been busy with the server's own work longer than the server
// ran, and a probe that waited longer than that waited for the machine's cores. For the same reason the victim's p99
// and the 2 s bound on each of its requests are judged on each request's time less the time the server's main thread
// waited for a core meanwhile (the kernel's run-queue wait, /proc/<pid>/schedstat), baseline and attack alike; the raw
// times are printed too. Only that wait is taken off: a wait for the pool, the database or another request's work
// stays the service's.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { longestEventLoopBlock } from '../../support/event-loop-lag.ts';
import { attempt, sleep } from '../../faults/support/fixture.ts';
import { startControlServer } from './control-server.ts';
import { describeCounts, describeSpread, ms, percentile, spread, type Spread } from './latency.ts';
import type { Neighbourhood } from './neighbourhood.ts';

/** One victim request every 250 ms: 4 requests a second. */
const INTERVAL_MS = 250;
const LIVEZ_EVERY_MS = 200;
/**
 * The victim gives up on a request after this long (it counts as unanswered: status 0): longer than the server's
 * own wait for a pool connection (DATABASE_CONNECT_TIMEOUT_MS, 5 s), so that its 503 shows.
 */
const VICTIM_DEADLINE_MS = 8_000;
const WARM_UP_MS = 1_500;
const BASELINE_MS = 6_000;

/** No victim request may take longer, under attack or not. */
export const VICTIM_MAX_MS = 2_000;
export const LIVEZ_MAX_MS = 250;
/** The victim must be back to its baseline within this long after the attacker stops. */
export const RECOVERY_WITHIN_MS = 10_000;
/** Consecutive victim requests that show it is back to its baseline. */
const RECOVERY_WINDOW = 8;

/** The highest p99 allowed under attack: 5 × the baseline's, or the baseline's + 250 ms, whichever is larger. */
export const attackBound = (baseline: Spread) => Math.max(5 * baseline.p99, baseline.p99 + 250);
/** Back to baseline: a window whose median is near the baseline's and whose every request is near its p99. */
const recoveredMedianBound = (baseline: Spread) => Math.max(2 * baseline.p50, baseline.p50 + 25);
const recoveredEachBound = (baseline: Spread) => Math.max(3 * baseline.p99, baseline.p99 + 100);

type Phase = 'warm-up' | 'baseline' | 'attack' | 'recovery';

interface Sample {
  what: string;
  phase: Phase;
  /** The attack's step when it was sent (see Pressure.step). */
  step: string;
  /** The probe round it belongs to, pairing a /livez probe with its control probe. */
  round: number;
  sentAt: number;
  status: number;
  ms: number;
  /** The server process's CPU time (every thread) from before the request to after its answer, for /livez probes. */
  serverCpuMs?: number;
  /** The time the server's main thread waited for a core over the same span, for the victim's requests. */
  serverQueuedMs?: number;
}

/** What the attack reports about itself: lines of pressure, printed with the verdict. */
export interface Pressure {
  note(line: string): void;
  /** Names what the attacker does from now on; the victim's latency is printed per step. */
  step(name: string): void;
}

export interface Verdict {
  baseline: Spread;
  underAttack: Spread;
  /** Milliseconds from the attacker's stop to the first of RECOVERY_WINDOW requests back at baseline; undefined: never. */
  recoveredAfterMs: number | undefined;
  livezMaxMs: number;
  /** Every broken promise, in words; empty when the victim was unharmed. */
  failures: string[];
}

/** One operation the attack will use, sent once by the victim during the warm-up (see `victimUnderAttack`). */
export interface WarmUp {
  method: 'GET' | 'POST' | 'PATCH';
  path: string;
  body?: unknown;
}

/**
 * Runs `attack` (which must stop the attacker before it resolves) between a baseline and a recovery of the victim's
 * load, prints what was applied and what the victim saw, and returns the verdict. Assert with `assertUnharmed`.
 * `warmUp` names the operations of the attack: the server compiles an operation's validators on its first request
 * (openapi-backend's `quick`), which a server in service has long done, so the victim sends each once before the
 * baseline and that compile is not charged to the attack.
 */
export async function victimUnderAttack(
  n: Neighbourhood,
  scenario: string,
  attack: (pressure: Pressure) => Promise<void>,
  warmUp: WarmUp[] = [],
): Promise<Verdict> {
  const notes: string[] = [];
  const samples: Sample[] = [];
  const livez: Sample[] = [];
  const control: Sample[] = [];
  const inFlight = new Set<Promise<void>>();
  const controlServer = await startControlServer();
  let phase: Phase = 'warm-up';
  let step = '';
  let stoppedAt = 0;
  let running = true;

  const victimRequests = [
    { what: 'GET /api/tasks', path: '/api/tasks', key: n.victim.key },
    { what: 'GET /api/today/loop', path: '/api/today/loop', key: n.victim.key },
    { what: 'GET /api/v1/universities (partner)', path: '/api/v1/universities?limit=20', key: n.victim.partnerKey },
  ];
  const serverCpu = cpuTimeOf(n.server.child.pid!);
  const serverQueued = queuedTimeOf(n.server.child.pid!);
  const measure = (
    into: Sample[],
    what: string,
    url: string,
    headers: Record<string, string>,
    round: number,
    server: { cpu?: () => number; queued?: () => number } = {},
  ) => {
    const sent = { phase, step, round, sentAt: performance.now() };
    const [cpuBefore, queuedBefore] = [server.cpu?.(), server.queued?.()];
    const done = attempt(url, { headers }, VICTIM_DEADLINE_MS).then((answer) => {
      const serverCpuMs = cpuBefore === undefined ? {} : { serverCpuMs: server.cpu!() - cpuBefore };
      const serverQueuedMs = queuedBefore === undefined ? {} : { serverQueuedMs: server.queued!() - queuedBefore };
      into.push({ what, ...sent, status: answer.status, ms: answer.ms, ...serverCpuMs, ...serverQueuedMs });
    });
    inFlight.add(done);
    void done.finally(() => inFlight.delete(done));
  };
  const every = async (intervalMs: number, send: (i: number) => void) => {
    const started = performance.now();
    for (let i = 0; running; i++) {
      send(i);
      await sleep(Math.max(0, started + (i + 1) * intervalMs - performance.now()));
    }
  };
  const victimLoad = every(INTERVAL_MS, (i) => {
    const request = victimRequests[i % victimRequests.length]!;
    const headers = { 'X-Service-API-Key': request.key };
    measure(samples, request.what, n.base + request.path, headers, i, { queued: serverQueued });
  });
  const livezProbe = every(LIVEZ_EVERY_MS, (i) => {
    measure(livez, 'GET /livez', `${n.base}/livez`, {}, i, { cpu: serverCpu });
    measure(control, 'GET control', controlServer.url, {}, i);
  });

  const ofPhase = (...phases: Phase[]) => samples.filter((s) => phases.includes(s.phase));
  const baselineOf = () => spread(ofPhase('baseline').map((s) => s.ms));
  /** The first window of RECOVERY_WINDOW requests sent after the stop that is back at baseline, as ms after the stop. */
  const recovery = (): number | undefined => {
    const baseline = baselineOf();
    const after = ofPhase('recovery').sort((a, b) => a.sentAt - b.sentAt);
    for (let i = 0; i + RECOVERY_WINDOW <= after.length; i++) {
      const window = after.slice(i, i + RECOVERY_WINDOW);
      if (window[0]!.sentAt - stoppedAt > RECOVERY_WITHIN_MS) return undefined;
      const ok =
        window.every((s) => s.status === 200 && s.ms <= recoveredEachBound(baseline)) &&
        percentile(
          window.map((s) => s.ms),
          50,
        ) <= recoveredMedianBound(baseline);
      if (ok) return window[0]!.sentAt - stoppedAt;
    }
    return undefined;
  };

  let clientBlockMs = 0;
  let recoveredAfterMs: number | undefined;
  try {
    const warmUpEnds = performance.now() + WARM_UP_MS;
    for (const operation of warmUp) await sendOnce(n, operation);
    await sleep(Math.max(0, warmUpEnds - performance.now()));
    phase = 'baseline';
    await sleep(BASELINE_MS);
    phase = 'attack';
    const attacked = await longestEventLoopBlock(() =>
      attack({ note: (line) => notes.push(line), step: (name) => void (step = name) }),
    );
    clientBlockMs = attacked.blockedMs;
    phase = 'recovery';
    stoppedAt = performance.now();
    // Long enough for a window that starts at the deadline to complete, each of its requests at its own deadline.
    const watchUntil = stoppedAt + RECOVERY_WITHIN_MS + RECOVERY_WINDOW * INTERVAL_MS + VICTIM_DEADLINE_MS;
    while ((recoveredAfterMs = recovery()) === undefined && performance.now() < watchUntil) await sleep(INTERVAL_MS);
  } finally {
    running = false;
    await Promise.all([victimLoad, livezProbe]);
    await Promise.all(inFlight);
    controlServer.close();
  }

  const baseline = baselineOf();
  const attacked = ofPhase('attack');
  const underAttack = spread(attacked.map((s) => s.ms));
  const inPhase = (of: Sample[], ...phases: Phase[]) => of.filter((s) => phases.includes(s.phase));
  // The machine's own extra delay while the attack ran, as the control server saw it.
  const controlBefore = spread(inPhase(control, 'baseline').map((s) => s.ms));
  const controlDuring = spread(inPhase(control, 'attack').map((s) => s.ms));
  const machineExcessMs = Math.max(0, controlDuring.p99 - controlBefore.p99);
  // Each victim request less the server's wait for a core meanwhile: what the service made the victim wait.
  const served = (of: Sample[]) => spread(of.map((s) => Math.max(0, s.ms - s.serverQueuedMs!)));
  const [servedBaseline, servedUnderAttack] = [served(ofPhase('baseline')), served(attacked)];
  const p99Bound = attackBound(servedBaseline) + machineExcessMs;
  // /livez is judged from the attack on; the baseline's is printed, as a measure of how busy the machine was already.
  const watched = inPhase(livez, 'attack', 'recovery');
  const livezBefore = spread(inPhase(livez, 'baseline').map((s) => s.ms));
  const livezMaxMs = Math.max(0, ...watched.map((s) => s.ms));
  const controlOfRound = new Map(control.map((s) => [s.round, s]));
  const machineStalled = (probe: Sample) => (controlOfRound.get(probe.round)?.ms ?? 0) > LIVEZ_MAX_MS;
  // A probe that waited longer than the server ran meanwhile waited for the cores, not for the server's own work.
  const serverRanLess = (probe: Sample) => probe.serverCpuMs! <= LIVEZ_MAX_MS;
  const slowLivez = watched.filter((s) => s.status !== 200 || s.ms > LIVEZ_MAX_MS);
  const stalledLivez = slowLivez.filter((s) => s.status === 200 && machineStalled(s));
  const waitedForCores = slowLivez.filter((s) => s.status === 200 && !machineStalled(s) && serverRanLess(s));
  const badLivez = slowLivez.filter((s) => s.status !== 200 || (!machineStalled(s) && !serverRanLess(s)));

  const failures: string[] = [];
  const statuses = (of: Sample[]) => describeCounts(count(of.map((s) => `${s.status}`)));
  const unanswered = attacked.filter((s) => s.status !== 200);
  if (baseline.n < 10) failures.push(`the baseline has ${baseline.n} answers only`);
  if (ofPhase('baseline').some((s) => s.status !== 200))
    failures.push(`the victim's baseline was not all 200: ${statuses(ofPhase('baseline'))}`);
  if (unanswered.length > 0)
    failures.push(`under attack the victim got ${statuses(attacked)} (${describeFirst(unanswered)})`);
  const slow = attacked.filter((s) => s.ms - s.serverQueuedMs! > VICTIM_MAX_MS);
  if (slow.length > 0)
    failures.push(
      `${slow.length} victim requests under attack took over ${ms(VICTIM_MAX_MS)}, less the server's waits for a core (${describeFirst(slow)})`,
    );
  if (servedUnderAttack.p99 > p99Bound)
    failures.push(
      `the victim's p99 under attack, less the server's waits for a core, ${ms(servedUnderAttack.p99)} > ${ms(p99Bound)} (max(5 × baseline p99, baseline p99 + 250 ms), each less those waits, + the machine's extra ${ms(machineExcessMs)})`,
    );
  if (badLivez.length > 0)
    failures.push(
      `${badLivez.length} of ${watched.length} /livez probes were not a 200 within ${ms(LIVEZ_MAX_MS)} while the control answered in time and the server ran longer (worst ${ms(livezMaxMs)}, ${describeFirst(badLivez)})`,
    );
  if (recoveredAfterMs === undefined)
    failures.push(
      `the victim was not back to its baseline within ${ms(RECOVERY_WITHIN_MS)} of the attacker's stop (${describeSpread(spread(ofPhase('recovery').map((s) => s.ms)))}, ${statuses(ofPhase('recovery'))})`,
    );

  const steps = [...new Set(attacked.map((s) => s.step))].filter((name) => name !== '');
  console.log(
    [
      `      [${scenario}]`,
      ...notes.map((line) => `      pressure: ${line.replace(/\n/g, '\n                ')}`),
      `      victim baseline:     ${describeSpread(baseline)}`,
      `      victim under attack: ${describeSpread(underAttack)}, statuses ${statuses(attacked)}`,
      `      less the server's waits for a core: baseline ${describeSpread(servedBaseline)}; under attack ${describeSpread(servedUnderAttack)} (bound: p99 ≤ ${ms(p99Bound)}, each ≤ ${ms(VICTIM_MAX_MS)})`,
      ...steps.map(
        (name) =>
          `        while the attacker ${name}: ${describeSpread(spread(attacked.filter((s) => s.step === name).map((s) => s.ms)))}`,
      ),
      `      victim back to baseline ${recoveredAfterMs === undefined ? 'NOT within' : `${ms(recoveredAfterMs)} after the stop (bound`} ${ms(RECOVERY_WITHIN_MS)}${recoveredAfterMs === undefined ? '' : ')'}`,
      `      /livez from the attack on: ${describeSpread(spread(watched.map((s) => s.ms)))}, statuses ${statuses(watched)} (bound ${ms(LIVEZ_MAX_MS)}; slow probes excused: ${stalledLivez.length} as the control was as slow, ${waitedForCores.length} as the server ran ${ms(LIVEZ_MAX_MS)} or less meanwhile; in the baseline: ${describeSpread(livezBefore)})`,
      `      the machine (control server): baseline ${describeSpread(controlBefore)}; under attack ${describeSpread(controlDuring)}`,
      `      this test process's own event loop was blocked at most ${ms(clientBlockMs)} during the attack (a client-side share of any slow number above)`,
      ...failures.map((failure) => `      FAILED: ${failure}`),
    ].join('\n'),
  );
  return { baseline, underAttack, recoveredAfterMs, livezMaxMs, failures };
}

/** A scenario's own promise: nothing when kept, its words when broken (for `assertUnharmed`). */
export function unless(kept: boolean, broken: string): string[] {
  return kept ? [] : [broken];
}

/**
 * Fails with every broken promise at once, the verdict's and the scenario's own (`unless`), so that a run against a
 * service without the bounds says everything that went wrong, not only the first.
 */
export function assertUnharmed(verdict: Verdict, scenario: string[] = []): void {
  for (const failure of scenario) console.log(`      FAILED: ${failure}`);
  const failures = [...verdict.failures, ...scenario];
  assert.ok(failures.length === 0, `${failures.length} broken:\n- ${failures.join('\n- ')}`);
}

/** Sends `operation` as the victim and hangs up once the answer's head is in (a stream or a download included). */
async function sendOnce(n: Neighbourhood, operation: WarmUp): Promise<void> {
  const abort = new AbortController();
  const deadline = setTimeout(() => abort.abort(), VICTIM_DEADLINE_MS);
  try {
    const body = operation.body === undefined ? {} : { body: JSON.stringify(operation.body) };
    await fetch(n.base + operation.path, {
      method: operation.method,
      headers: { 'X-Service-API-Key': n.victim.key, 'Content-Type': 'application/json' },
      ...body,
      signal: abort.signal,
    });
  } catch {
    // a warm-up that fails warms nothing more; the baseline that follows shows it
  } finally {
    clearTimeout(deadline);
    abort.abort();
  }
}

function count(values: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
}

function describeFirst(samples: Sample[]): string {
  const shown = samples
    .slice(0, 3)
    .map(
      (s) =>
        `${s.what} ${s.status || 'no answer'} in ${ms(s.ms)}${s.serverCpuMs === undefined ? '' : `, the server ran ${ms(s.serverCpuMs)}`}${s.serverQueuedMs === undefined ? '' : `, the server waited ${ms(s.serverQueuedMs)} for a core`} (${s.phase})`,
    );
  return `${shown.join('; ')}${samples.length > 3 ? '; …' : ''}`;
}

/**
 * The CPU time a process has used so far, every thread (user and system), in ms, read from /proc. The kernel counts it
 * in clock ticks (USER_HZ, which Linux fixes at 100 a second for /proc), so the time between two readings is within
 * 10 ms of the truth, against a bound of 250 ms.
 */
function cpuTimeOf(pid: number): () => number {
  let last = 0;
  return () => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // The fields after the command's name, which may hold spaces and parentheses: from the last parenthesis on.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      last = ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
    } catch {
      // the server has exited: its time stays as last read
    }
    return last;
  };
}
const CLOCK_TICKS_PER_SECOND = 100;

/**
 * The time a process's main thread (the event loop's) has waited on a run queue for a core so far, in ms: the second
 * field of /proc/<pid>/schedstat, in nanoseconds.
 */
function queuedTimeOf(pid: number): () => number {
  let last = 0;
  return () => {
    try {
      last = Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[1]) / 1e6;
    } catch {
      // the server has exited: its time stays as last read
    }
    return last;
  };
}
