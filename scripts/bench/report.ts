// Targets and output: bench/targets.json holds one profile per database engine (their costs differ by far too
// much for one set of numbers); the summary prints as a table, or as one JSON object for CI logs.
import { readFileSync } from 'node:fs';
import type { ScenarioResult } from './scenarios.ts';

export interface ScenarioTarget {
  minRequestsPerSec: number;
  maxP99Ms: number;
}

export interface TargetProfile {
  _note?: string;
  /** Highest server RSS allowed, whether after start-up or after any scenario. */
  maxRssMb: number;
  scenarios: Record<string, ScenarioTarget>;
}

export interface Summary {
  machine: { cpus: number; cpuModel: string; node: string };
  engine: 'pglite' | 'postgresql';
  database: string;
  limitStore: string;
  logging: string;
  mode: 'full' | 'quick';
  connections: number;
  durationSeconds: number;
  warmupSeconds: number;
  startup: { rssMb: number; heapUsedMb: number };
  scenarios: ScenarioResult[];
}

const TARGETS_FILE = new URL('../../bench/targets.json', import.meta.url);

export function loadTargets(engine: string): TargetProfile | undefined {
  const all = JSON.parse(readFileSync(TARGETS_FILE, 'utf8')) as Record<string, unknown>;
  return all[engine] as TargetProfile | undefined;
}

/** Every target the summary misses, in words; a scenario without a target counts as a miss so none goes unjudged. */
export function missedTargets(summary: Summary, profile: TargetProfile | undefined): string[] {
  if (!profile) return [`bench/targets.json has no "${summary.engine}" profile`];
  const misses: string[] = [];
  const rss = maxRss(summary);
  if (rss > profile.maxRssMb) misses.push(`RSS ${rss} MB > max ${profile.maxRssMb} MB`);
  for (const s of summary.scenarios) {
    const target = profile.scenarios[s.name];
    if (!target) {
      misses.push(`${s.name}: no target in bench/targets.json`);
      continue;
    }
    if (s.requestsPerSec < target.minRequestsPerSec) misses.push(`${s.name}: ${round(s.requestsPerSec)} req/s < min ${target.minRequestsPerSec}`);
    if (s.latencyMs.p99 > target.maxP99Ms) misses.push(`${s.name}: p99 ${s.latencyMs.p99} ms > max ${target.maxP99Ms} ms`);
  }
  return misses;
}

export function maxRss(summary: Summary): number {
  return Math.max(summary.startup.rssMb, ...summary.scenarios.map((s) => s.rssMb));
}

export function printTable(summary: Summary, profile: TargetProfile | undefined, misses: string[], judged: boolean): void {
  const out: string[] = [];
  out.push(`study-companion-api bench (${summary.mode}: ${summary.connections} connections, ${summary.durationSeconds} s per scenario after ${summary.warmupSeconds} s warm-up)`);
  out.push(`  machine: ${summary.machine.cpus} × ${summary.machine.cpuModel}, Node ${summary.machine.node}`);
  out.push(`  database: ${summary.database}; rate limits: ${summary.limitStore}`);
  out.push(`  logging: ${summary.logging}`);
  out.push('  CPU µs/req: server process only (user + system); includes PGlite, excludes a PostgreSQL or Redis server');
  out.push(`  server RSS after start-up: ${summary.startup.rssMb} MB (heap used ${summary.startup.heapUsedMb} MB)`);
  out.push('');
  const header = ['scenario', 'req/s', 'p50 ms', 'p97.5 ms', 'p99 ms', 'CPU µs/req', 'RSS MB', 'heap MB', 'target req/s', 'target p99', 'statuses'];
  const rows = summary.scenarios.map((s) => {
    const target = profile?.scenarios[s.name];
    return [
      s.name,
      String(round(s.requestsPerSec)),
      String(s.latencyMs.p50),
      String(s.latencyMs.p97_5),
      String(s.latencyMs.p99),
      String(s.cpuUsPerRequest),
      String(s.rssMb),
      String(s.heapUsedMb),
      target ? `≥ ${target.minRequestsPerSec}` : '-',
      target ? `≤ ${target.maxP99Ms}` : '-',
      Object.entries(s.statuses).map(([code, count]) => `${code}×${count}`).join(' ') + (s.failures.length > 0 ? '  ✗' : ''),
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]?.length ?? 0)));
  const line = (cells: string[]) => ('  ' + cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : i === cells.length - 1 ? c : c.padStart(widths[i] ?? 0))).join('  '));
  out.push(line(header), ...rows.map(line));
  out.push('');
  out.push(`  max RSS: ${maxRss(summary)} MB${profile ? ` (target ≤ ${profile.maxRssMb} MB)` : ''}`);

  for (const s of summary.scenarios) for (const failure of s.failures) out.push(`  FAILED ${s.name}: ${failure}`);
  if (!judged) {
    out.push(`  targets not judged: --quick runs are too short (${misses.length} would be missed${misses.length ? ': ' + misses.join('; ') : ''})`);
  } else if (misses.length > 0) {
    for (const miss of misses) out.push(`  MISSED ${miss}`);
  } else {
    out.push('  all targets met');
  }
  console.log(out.join('\n'));
}

export function printJson(summary: Summary, profile: TargetProfile | undefined, misses: string[], judged: boolean, ok: boolean): void {
  console.log(JSON.stringify({ ...summary, maxRssMb: maxRss(summary), targets: profile ?? null, targetsJudged: judged, missedTargets: misses, ok }, null, 2));
}

function round(n: number): number {
  return Math.round(n);
}
