// Targets and output. bench/targets.json holds one profile per database engine; its scenario targets are ratios to
// the bare Express baseline, or for the writes to the naive peer, measured in the same run (absolute figures move up
// to ~3x with the machine's day), plus the few absolute limits the product sets (start-up time, memory, a latency
// ceiling). The summary prints as a table and is written as JSON (bench/results/, for comparing commits).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { eventLatencyLines, type EventLatencies, type EventTargets } from './event-latency.ts';
import type { Measurement, RoundCpu } from './scenarios.ts';

export interface ScenarioTarget {
  /** Highest CPU per request allowed, as a multiple of bare Express's in the same run (the reads' yardstick). */
  maxCpuRatio?: number;
  /**
   * Highest CPU per request allowed as a multiple of the naive Express + pg peer's in the same run (the writes'
   * yardstick: bare Express writes nothing durable); judged where the peer runs: on PostgreSQL, and in an embedded
   * run with BENCH_PEER_DATABASE_URL (the peer on that server).
   */
  maxPeerRatio?: number;
  /**
   * Where the run has no peer (an embedded run without BENCH_PEER_DATABASE_URL): the ceiling against bare Express
   * that stands in for maxPeerRatio, judged only then.
   */
  maxCpuRatioWithoutPeer?: number;
  /** Highest p99 latency allowed, in ms (only where the product sets one). */
  maxP99Ms?: number;
  /**
   * Highest CPU per command allowed as a multiple of its twin's per command (Scenario.twin: a sync push of 100 against
   * the same 100 writes as single requests), measured on the service in the same alternating rounds.
   */
  maxTwinRatio?: number;
}

export interface TargetProfile {
  _note?: string;
  /** The embedded default's start (first `npm start` on an empty DATA_DIR, then a restart), in ms. */
  maxFirstStartMs?: number;
  maxRestartMs?: number;
  /** Highest server RSS allowed: after start-up and at its peak under the bench. */
  maxRssMb: number;
  scenarios: Record<string, ScenarioTarget>;
  events?: EventTargets;
}

export interface ScenarioSummary {
  name: string;
  method: string;
  path: string;
  expectedStatus: number;
  service: Measurement;
  baseline: Measurement;
  /** Service CPU per request ÷ baseline CPU per request: the median of the rounds' ratios. */
  cpuRatio: number;
  /** The lowest and the highest round's ratio. */
  cpuRatioRange: [number, number];
  /** Service req/s ÷ baseline req/s. */
  throughputRatio: number;
  /** The naive peer's side (scripts/bench/peer.ts), where it ran, and the service's ratio to it (median, range). */
  peer?: Measurement;
  peerRatio?: number;
  peerRatioRange?: [number, number];
  /** The writes one request makes (a sync push's commands), where more than one. */
  commands?: number;
  /** The twin (Scenario.twin), where it has one: its name, its side and the service's ratio to it per command. */
  twinName?: string;
  twin?: Measurement;
  twinRatio?: number;
  twinRatioRange?: [number, number];
  /** Each round's CPU a request of each side (written to the results file). */
  rounds?: RoundCpu[];
}

export interface Startup {
  /**
   * From spawning `node app/start.mjs` (what npm start runs) on an empty database to its first answered request; the
   * restart is the measured service's start on the same database.
   */
  firstStartMs: number;
  firstStartRssMb: number;
  restartMs: number;
  restartRssMb: number;
}

export interface Summary {
  commit: string;
  at: string;
  machine: { cpus: number; cpuModel: string; node: string; loadAverage: number[] };
  engine: 'pglite' | 'postgresql';
  database: string;
  /** Students generated on top of the demo data (--scale; scripts/bench.ts POSTGRESQL_STUDENTS by default on PostgreSQL). */
  scaleStudents: number;
  limitStore: string;
  /**
   * Where the naive peer ran (scripts/bench/peer.ts: always PostgreSQL, for an embedded run the server of
   * BENCH_PEER_DATABASE_URL), or null for a run without it.
   */
  peerDatabase: string | null;
  /** The database was vacuumed and analyzed after each scenario's warm-up: its server runs without autovacuum (maintainWithoutAutovacuum). */
  maintainedAfterWarmUps: boolean;
  logLevel: string;
  processes: number;
  pinning: { server: string; load: string } | null;
  mode: 'full' | 'quick';
  connections: number;
  /** `--rate`: requests a second over all connections, or undefined for as fast as answered. */
  rate: number | undefined;
  /** Alternating rounds (baseline, then service) per scenario, each of `durationSeconds` or `requests`. */
  rounds: number;
  durationSeconds: number;
  warmupSeconds: number;
  /** The warm-up of a process's first scenario in the run, and of the service's first of each surface. */
  firstWarmupSeconds: number;
  /** Quick runs: a number of requests per scenario instead of a duration. */
  requests: number | undefined;
  startup: Startup;
  /** The measured server (every process of it) after its start and at its peak over all scenarios. */
  rss: { afterStartMb: number; peakMb: number };
  scenarios: ScenarioSummary[];
  /** Commit to webhook and to stream (absent with --only and no `events`). */
  events?: EventLatencies;
}

const TARGETS_FILE = new URL('../../bench/targets.json', import.meta.url);
const RESULTS_DIR = new URL('../../bench/results/', import.meta.url);

export function loadTargets(engine: string): TargetProfile | undefined {
  const all = JSON.parse(readFileSync(TARGETS_FILE, 'utf8')) as Record<string, unknown>;
  return all[engine] as TargetProfile | undefined;
}

/** Every target the summary misses, in words; a scenario without a target counts as a miss so none goes unjudged. */
export function missedTargets(summary: Summary, profile: TargetProfile | undefined): string[] {
  if (!profile) return [`bench/targets.json has no "${summary.engine}" profile`];
  const misses: string[] = [];
  const { startup, rss } = summary;
  if (profile.maxFirstStartMs !== undefined && startup.firstStartMs > profile.maxFirstStartMs)
    misses.push(`first start ${startup.firstStartMs} ms > max ${profile.maxFirstStartMs} ms`);
  if (profile.maxRestartMs !== undefined && startup.restartMs > profile.maxRestartMs)
    misses.push(`restart ${startup.restartMs} ms > max ${profile.maxRestartMs} ms`);
  const highest = Math.max(startup.firstStartRssMb, startup.restartRssMb, rss.afterStartMb, rss.peakMb);
  if (highest > profile.maxRssMb) misses.push(`server RSS ${highest} MB > max ${profile.maxRssMb} MB`);
  for (const s of summary.scenarios) {
    const target = profile.scenarios[s.name];
    if (!target) {
      misses.push(`${s.name}: no target in bench/targets.json`);
      continue;
    }
    if (target.maxCpuRatio !== undefined && s.cpuRatio > target.maxCpuRatio) {
      misses.push(`${s.name}: CPU/request ${s.cpuRatio}× bare Express > max ${target.maxCpuRatio}×`);
    }
    if (target.maxPeerRatio !== undefined) {
      // A run without a peer at all judges the stand-in below; one with a peer that skipped a write misses it.
      if (s.peerRatio === undefined) {
        if (summary.peerDatabase) misses.push(`${s.name}: the naive peer did not run`);
      } else if (s.peerRatio > target.maxPeerRatio) {
        misses.push(`${s.name}: CPU/request ${s.peerRatio}× the naive peer > max ${target.maxPeerRatio}×`);
      }
    }
    const withoutPeer = summary.peerDatabase ? undefined : target.maxCpuRatioWithoutPeer;
    if (withoutPeer !== undefined && s.cpuRatio > withoutPeer) {
      misses.push(`${s.name}: CPU/request ${s.cpuRatio}× bare Express > max ${withoutPeer}× (no peer in this run)`);
    }
    if (target.maxP99Ms !== undefined && s.service.latencyMs.p99 > target.maxP99Ms)
      misses.push(`${s.name}: p99 ${s.service.latencyMs.p99} ms > max ${target.maxP99Ms} ms`);
    if (target.maxTwinRatio !== undefined) {
      if (s.twinRatio === undefined) misses.push(`${s.name}: its twin did not run`);
      else if (s.twinRatio > target.maxTwinRatio) {
        misses.push(`${s.name}: CPU/command ${s.twinRatio}× ${s.twinName}'s > max ${target.maxTwinRatio}×`);
      }
    }
  }
  return misses;
}

/**
 * The peer targets a run without the peer cannot judge (an embedded run without BENCH_PEER_DATABASE_URL), each with
 * the bare-Express ceiling judged in its place, if any.
 */
export function peerTargetsNotJudged(summary: Summary, profile: TargetProfile | undefined): string[] {
  if (summary.peerDatabase || !profile) return [];
  return summary.scenarios.flatMap((s) => {
    const target = profile.scenarios[s.name];
    if (target?.maxPeerRatio === undefined) return [];
    const standIn = target.maxCpuRatioWithoutPeer;
    return [
      `${s.name} ≤ ${target.maxPeerRatio}× peer${standIn === undefined ? '' : ` (judged: ≤ ${standIn}× bare Express)`}`,
    ];
  });
}

/** `unjudged`: why the targets are not judged in this run, or undefined when they are. */
export function printTable(
  summary: Summary,
  profile: TargetProfile | undefined,
  misses: string[],
  unjudged: string | undefined,
  resultsFile: string | undefined,
): void {
  const out: string[] = [];
  const s = summary;
  const each = s.requests ? `${s.requests} requests` : `${s.durationSeconds} s`;
  const warmUp = s.requests
    ? 'a warm-up'
    : `a warm-up (${s.firstWarmupSeconds} s for a process's first scenario and the service's first of each surface)`;
  const length = `${s.rounds} round(s) per scenario of ${each} on the baseline then ${each} on the service, after ${warmUp}`;
  const load = `${s.connections} connection(s)${s.rate === undefined ? '' : ` sending ${s.rate} requests/s in all`}`;
  out.push(`study-companion-api bench (${s.mode}: ${load}, ${length}; commit ${s.commit})`);
  out.push(
    `  machine: ${s.machine.cpus} × ${s.machine.cpuModel}, Node ${s.machine.node}, load average ${s.machine.loadAverage.map((l) => l.toFixed(1)).join(' ')}`,
  );
  out.push(
    `  database: ${s.database}${s.scaleStudents ? ` + ${s.scaleStudents.toLocaleString('en')} generated students` : ''}; rate limits: ${s.limitStore}; LOG_LEVEL=${s.logLevel}; ${s.processes} web process(es)`,
  );
  if (s.maintainedAfterWarmUps)
    out.push(
      "  autovacuum: off on this server, so the bench does its work (VACUUM ANALYZE) after each scenario's warm-up, as autovacuum keeps a running service's dead versions and statistics",
    );
  out.push(
    `  pinning: ${s.pinning ? `server on core(s) ${s.pinning.server}, load generator on core ${s.pinning.load} (taskset)` : 'none (--unpinned, no taskset, or too few cores)'}`,
  );
  out.push(
    '  baseline: bare Express 5 answering each scenario with the same status and JSON from memory, in the same run',
  );
  if (s.peerDatabase) {
    out.push(
      "  peer: a naive Express 5 + pg service doing the write's durable minimum on its own schema" +
        ` (scripts/bench/peer.ts) in ${s.peerDatabase}, in the same` +
        " rounds; ÷ peer: the median of the rounds' ratios of the service to it",
    );
  }
  const notJudged = peerTargetsNotJudged(s, profile);
  if (notJudged.length > 0) {
    out.push(
      `  peer: none (BENCH_PEER_DATABASE_URL=postgres://… runs it on that server), so not judged: ${notJudged.join('; ')}`,
    );
  }
  out.push(
    `  CPU µs/req: user + system of the server's processes${s.engine === 'postgresql' ? " plus its PostgreSQL backends (of which PG µs/req is the backends' share)" : ' (PGlite runs inside it)'}, over the measured runs`,
  );
  out.push(
    "  CPU ratio: the median of the rounds' ratios (each round: the baseline, then the service, seconds apart), and their range",
  );
  out.push(
    `  start (to the first answered request): first start on the empty database ${s.startup.firstStartMs} ms (RSS ${s.startup.firstStartRssMb} MB), restart ${s.startup.restartMs} ms (RSS ${s.startup.restartRssMb} MB)`,
  );
  out.push(`  server RSS: ${s.rss.afterStartMb} MB after start-up, ${s.rss.peakMb} MB at its peak under the bench`);
  out.push('');
  const split = s.scenarios.some((r) => r.service.databaseCpuUsPerRequest !== undefined);
  const peer = s.scenarios.some((r) => r.peer);
  const header = [
    ...['scenario', 'req/s', 'p50 ms', 'p99 ms', 'CPU µs/req', ...(split ? ['PG µs/req'] : [])],
    ...['bare req/s', 'bare µs/req', 'CPU ratio', 'rounds'],
    ...(peer ? ['peer µs/req', 'peer PG', '÷ peer', 'rounds'] : []),
    ...['target', 'statuses'],
  ];
  const rows = s.scenarios.map((r) => {
    const target = profile?.scenarios[r.name];
    return [
      r.name,
      String(r.service.requestsPerSec),
      String(r.service.latencyMs.p50),
      String(r.service.latencyMs.p99),
      String(r.service.cpuUsPerRequest),
      ...(split ? [String(r.service.databaseCpuUsPerRequest ?? '-')] : []),
      String(r.baseline.requestsPerSec),
      String(r.baseline.cpuUsPerRequest),
      `${r.cpuRatio}×`,
      `${r.cpuRatioRange[0]}–${r.cpuRatioRange[1]}×`,
      ...(peer ? peerCells(r) : []),
      target ? targetCell(target) : '-',
      Object.entries(r.service.statuses)
        .map(([code, count]) => `${code}×${count}`)
        .join(' ') + (r.service.failures.length + r.baseline.failures.length > 0 ? '  ✗' : ''),
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]?.length ?? 0)));
  const line = (cells: string[]) =>
    '  ' +
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : i === cells.length - 1 ? c : c.padStart(widths[i] ?? 0)))
      .join('  ');
  out.push(line(header), ...rows.map(line));
  out.push('');
  const twinned = s.scenarios.filter((r) => r.twin && r.twinRatioRange);
  for (const r of twinned) {
    const perCommand = Math.round(r.service.cpuUsPerRequest / (r.commands ?? 1));
    out.push(
      `  ${r.name}: ${perCommand} CPU µs per command (${r.commands ?? 1} a request) against ${r.twin!.cpuUsPerRequest} µs per ` +
        `request of ${r.twinName} in the same rounds: ${r.twinRatio}× (rounds ${r.twinRatioRange![0]}–${r.twinRatioRange![1]}×)`,
    );
  }
  if (twinned.length > 0) out.push('');
  if (s.events) out.push(...eventLatencyLines(s.events, profile?.events), '');
  for (const r of s.scenarios) {
    for (const failure of r.service.failures) out.push(`  FAILED ${r.name}: ${failure}`);
    for (const failure of r.baseline.failures) out.push(`  FAILED ${r.name} (baseline): ${failure}`);
  }
  if (unjudged)
    out.push(
      `  targets not judged: ${unjudged} (${misses.length} would be missed${misses.length ? ': ' + misses.join('; ') : ''})`,
    );
  else if (misses.length > 0) for (const miss of misses) out.push(`  MISSED ${miss}`);
  else out.push('  all targets met');
  if (resultsFile) out.push(`  written: ${resultsFile}`);
  console.log(out.join('\n'));
}

/** The peer's columns: its CPU per request, its PostgreSQL backends' share, and the service's ratio to it. */
function peerCells(r: ScenarioSummary): string[] {
  if (!r.peer || !r.peerRatioRange) return ['-', '-', '-', '-'];
  return [
    String(r.peer.cpuUsPerRequest),
    String(r.peer.databaseCpuUsPerRequest ?? '-'),
    `${r.peerRatio}×`,
    `${r.peerRatioRange[0]}–${r.peerRatioRange[1]}×`,
  ];
}

function targetCell(target: ScenarioTarget): string {
  const parts = [
    ...(target.maxCpuRatio !== undefined ? [`≤ ${target.maxCpuRatio}×`] : []),
    ...(target.maxPeerRatio !== undefined ? [`≤ ${target.maxPeerRatio}× peer`] : []),
    ...(target.maxCpuRatioWithoutPeer !== undefined ? [`≤ ${target.maxCpuRatioWithoutPeer}× without peer`] : []),
    ...(target.maxP99Ms !== undefined ? [`p99 ≤ ${target.maxP99Ms}`] : []),
    ...(target.maxTwinRatio !== undefined ? [`≤ ${target.maxTwinRatio}× twin/command`] : []),
  ];
  return parts.join(', ');
}

/** bench/results/<timestamp>-<engine>.json (gitignored), for comparisons between commits. */
export function writeResults(
  summary: Summary,
  profile: TargetProfile | undefined,
  misses: string[],
  judged: boolean,
  ok: boolean,
): string {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = new URL(
    `${summary.at.replace(/[:.]/g, '-')}-${summary.engine}${summary.mode === 'quick' ? '-quick' : ''}.json`,
    RESULTS_DIR,
  );
  writeFileSync(file, JSON.stringify(resultJson(summary, profile, misses, judged, ok), null, 2) + '\n');
  return file.pathname;
}

export function resultJson(
  summary: Summary,
  profile: TargetProfile | undefined,
  misses: string[],
  judged: boolean,
  ok: boolean,
) {
  const notJudged = peerTargetsNotJudged(summary, profile);
  return {
    ...summary,
    targets: profile ?? null,
    targetsJudged: judged,
    missedTargets: misses,
    peerTargetsNotJudged: notJudged,
    ok,
  };
}
