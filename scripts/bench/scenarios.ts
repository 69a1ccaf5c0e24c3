// What the bench measures: one request shape per scenario, driven by autocannon over loopback, every response
// required to carry the expected status (a fast wrong answer is not a result).
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type autocannon from 'autocannon';
import type { BenchApp } from './setup.ts';

export interface Scenario {
  name: string;
  path: string;
  /** What the request authenticates with: the partner key, the demo student's OAuth access token, or nothing (401). */
  credential: 'partner-key' | 'student-token' | 'none';
  expectedStatus: number;
}

export function scenarios(year: number): Scenario[] {
  return [
    { name: 'health', path: '/api/v1/health', credential: 'partner-key', expectedStatus: 200 },
    { name: 'universities', path: '/api/v1/universities?limit=20', credential: 'partner-key', expectedStatus: 200 },
    { name: 'leaderboard', path: '/api/v1/leaderboards/global?limit=100', credential: 'partner-key', expectedStatus: 200 },
    { name: 'holidays', path: `/api/v1/holidays/kz?year=${year}`, credential: 'partner-key', expectedStatus: 200 },
    { name: 'invalid-400', path: '/api/v1/universities?limit=0', credential: 'partner-key', expectedStatus: 400 },
    { name: 'unauthenticated-401', path: '/api/v1/health', credential: 'none', expectedStatus: 401 },
    // The general surface: an ES256 JWT verified and its grant read on every request, then the student's data.
    { name: 'profile', path: '/api/users/me', credential: 'student-token', expectedStatus: 200 },
    { name: 'tasks', path: '/api/tasks?limit=20', credential: 'student-token', expectedStatus: 200 },
    { name: 'today-loop', path: '/api/today/loop', credential: 'student-token', expectedStatus: 200 },
  ];
}

export interface RunOptions {
  connections: number;
  durationSeconds: number;
  warmupSeconds: number;
}

export interface ScenarioResult {
  name: string;
  path: string;
  expectedStatus: number;
  requests: number;
  requestsPerSec: number;
  latencyMs: { p50: number; p97_5: number; p99: number };
  /**
   * CPU time (user + system, all threads) of the server process per response: steadier than req/s when the
   * machine is shared. With PGlite it includes the database's work; a PostgreSQL server's is not counted.
   */
  cpuUsPerRequest: number;
  /** Response count by status code, as autocannon saw them. */
  statuses: Record<string, number>;
  /** Server process memory once the scenario is over. */
  rssMb: number;
  heapUsedMb: number;
  /** Why the scenario's responses cannot be trusted (wrong status, socket errors); empty when fine. */
  failures: string[];
}

export async function runScenario(app: BenchApp, scenario: Scenario, options: RunOptions): Promise<ScenarioResult> {
  const url = app.baseUrl + scenario.path;
  const headers: Record<string, string> = {
    'partner-key': { 'x-service-api-key': app.apiKey },
    'student-token': { authorization: `Bearer ${app.studentToken}` },
    none: {},
  }[scenario.credential];

  // One request first: a wrong status shows its body here instead of a bare count after seconds of load.
  const probe = await fetch(url, { headers });
  const probeBody = await probe.text();
  if (probe.status !== scenario.expectedStatus) {
    throw new Error(`${scenario.name}: GET ${scenario.path} answered ${probe.status}, expected ${scenario.expectedStatus}: ${probeBody.slice(0, 500)}`);
  }

  const base = { url, headers, connections: options.connections };
  const { result, cpuMicros } = await runLoad({ ...base, duration: options.warmupSeconds }, { ...base, duration: options.durationSeconds });

  const statuses = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, stats]) => [code, stats.count ?? 0]));
  const failures: string[] = [];
  const unexpected = Object.entries(statuses).filter(([code, count]) => code !== String(scenario.expectedStatus) && count > 0);
  if (unexpected.length > 0) {
    failures.push(`unexpected statuses ${unexpected.map(([code, count]) => `${code}×${count}`).join(', ')} (expected only ${scenario.expectedStatus})`);
  }
  if (result.errors > 0) failures.push(`${result.errors} connection errors`);
  if (result.timeouts > 0) failures.push(`${result.timeouts} timeouts`);
  if (result.requests.total === 0) failures.push('no responses');

  const memory = process.memoryUsage();
  return {
    name: scenario.name,
    path: scenario.path,
    expectedStatus: scenario.expectedStatus,
    requests: result.requests.total,
    requestsPerSec: result.requests.average,
    latencyMs: { p50: result.latency.p50, p97_5: result.latency.p97_5, p99: result.latency.p99 },
    cpuUsPerRequest: result.requests.total > 0 ? Math.round(cpuMicros / result.requests.total) : 0,
    statuses,
    rssMb: toMb(memory.rss),
    heapUsedMb: toMb(memory.heapUsed),
    failures,
  };
}

export function toMb(bytes: number): number {
  return Math.round(bytes / 1024 / 1024);
}

const LOAD_SCRIPT = fileURLToPath(new URL('./load.ts', import.meta.url));

type LoadMessage = { measuring: true } | { result: autocannon.Result } | { error: string };

/**
 * Runs the warm-up (discarded) and then the measured run in a child process (see load.ts for why), and the CPU
 * time this process spent during the measured run.
 */
function runLoad(warmup: autocannon.Options, measured: autocannon.Options): Promise<{ result: autocannon.Result; cpuMicros: number }> {
  return new Promise((resolve, reject) => {
    // The child inherits tsx's loader through process.execArgv, so it can be TypeScript too.
    const child = fork(LOAD_SCRIPT, { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    let answered = false;
    let cpuAtStart = process.cpuUsage();
    child.on('message', (message: LoadMessage) => {
      if ('measuring' in message) {
        cpuAtStart = process.cpuUsage();
        return;
      }
      answered = true;
      if ('result' in message) {
        const cpu = process.cpuUsage(cpuAtStart);
        resolve({ result: message.result, cpuMicros: cpu.user + cpu.system });
      } else reject(new Error(`load generator: ${message.error}`));
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      if (!answered) reject(new Error(`load generator exited with code ${code} before answering`));
    });
    child.send({ warmup, measured });
  });
}
