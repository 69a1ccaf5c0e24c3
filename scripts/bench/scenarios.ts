// What the bench measures: one request shape per scenario, driven by autocannon from its own process over loopback,
// every response required to carry the expected status (a fast wrong answer is not a result).
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type autocannon from 'autocannon';
import { cpuMicros, cpuSpent, pinned } from './processes.ts';
import type { BenchStudent, Credentials } from './setup.ts';
import { SYNC_PAGE } from './sync-student.ts';

export interface Scenario {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  /**
   * What the request authenticates with: the partner key, the demo student's OAuth access token, the large sync
   * account's (scripts/bench/sync-student.ts), or nothing (401).
   */
  credential: 'partner-key' | 'student-token' | 'sync-student-token' | 'none';
  expectedStatus: number;
  /**
   * Many students at once: each connection acts for another of the bench's students (its own token) and sends these
   * paths in turn, its own cards' for a review. Without it every connection is the demo student, the contention case.
   */
  perStudent?: (student: BenchStudent) => string[];
  /** The naive Express + pg peer (scripts/bench/peer.ts) serves it too, on PostgreSQL: a write's yardstick. */
  peer?: true;
  /** The writes one request makes (a sync push's commands): its CPU is also judged per command. */
  commands?: number;
  /**
   * The scenario whose CPU per command is this one's yardstick, measured on the service in the same alternating rounds
   * (a push of 100 commands against the same 100 writes as single requests).
   */
  twin?: string;
  /**
   * Its body's uuids that start with FRESH_UUID_MARK are made new for every request by the load generator (sync
   * commands run once per uuid: the same ones again would measure replays).
   */
  freshUuids?: true;
  /**
   * A request that lasts a second or more (a push of 100 writes): its runs count this many requests, quick or full,
   * on this many connections, each answered within `timeoutSeconds`. A run of a duration would cut such requests off,
   * and the CPU the server still spends on them would be counted in the next run.
   */
  long?: { requests: number; warmUpRequests: number; connections: number; timeoutSeconds: number };
  /**
   * Paths that every connection sends in turn instead of `path` (the pages of one sync, the first as `path`), each
   * connection from another place of the list (connectionRequests).
   */
  paths?: string[];
}

/** The start of a uuid the load generator replaces in every request of a `freshUuids` scenario (load.ts). */
export const FRESH_UUID_MARK = 'aaaaaaaa-aaaa-4aaa-8aaa-';

/** The commands of one sync push in the bench, and as many single requests as its twin. */
export const SYNC_PUSH_COMMANDS = 100;

/**
 * What a scenario's path names of the bench's data: the demo student's card that the review scenario grades, and
 * the pages of the large account's full sync.
 */
export type ScenarioIds = Pick<Credentials, 'cardId' | 'syncPageTokens'>;

/**
 * The issue's scenarios first (partner v1's hot reads, then the general surface with a JWT), then the refusals.
 * `ids` may be left out where only the names are needed.
 */
export function scenarios(
  year: number,
  ids: ScenarioIds = { cardId: '00000000-0000-0000-0000-000000000000', syncPageTokens: ['*'] },
): Scenario[] {
  const syncPages = ids.syncPageTokens.map(
    (token) => `/api/sync?limit=${SYNC_PAGE}&sync_token=${encodeURIComponent(token)}`,
  );
  const createTask = {
    method: 'POST',
    path: '/api/tasks',
    body: { title: 'Problem set 4', due_at: `${year + 1}-01-15T09:00:00Z`, course: 'Linear Algebra' },
    credential: 'student-token',
    expectedStatus: 201,
    peer: true,
  } as const;
  // Issue 38: a push of 100 offline edits against the same 100 writes as single requests, CPU per write.
  const newTask = { title: 'Problem set 5', due_at: `${year + 1}-01-22T09:00:00Z`, course: 'Linear Algebra' };
  const syncPush = {
    commands: Array.from({ length: SYNC_PUSH_COMMANDS }, (_, i) => ({
      uuid: FRESH_UUID_MARK + i.toString(16).padStart(12, '0'),
      type: 'task_add',
      args: newTask,
    })),
  };
  const cardReview = {
    method: 'POST',
    body: { grade: 2 },
    credential: 'student-token',
    expectedStatus: 201,
    peer: true,
  } as const;
  return [
    {
      name: 'v1-universities',
      method: 'GET',
      path: '/api/v1/universities?country_code=kz&limit=20',
      credential: 'partner-key',
      expectedStatus: 200,
    },
    {
      name: 'v1-leaderboard',
      method: 'GET',
      path: '/api/v1/leaderboards/global?limit=100',
      credential: 'partner-key',
      expectedStatus: 200,
    },
    { name: 'v1-health', method: 'GET', path: '/api/v1/health', credential: 'partner-key', expectedStatus: 200 },
    {
      name: 'v1-holidays',
      method: 'GET',
      path: `/api/v1/holidays/kz?year=${year}`,
      credential: 'partner-key',
      expectedStatus: 200,
    },
    // Counters and active students per hour of last activity: constant work however many students there are.
    { name: 'v1-stats', method: 'GET', path: '/api/v1/stats', credential: 'partner-key', expectedStatus: 200 },
    // The general surface: an ES256 JWT verified and its grant read on every request, then the student's data.
    {
      name: 'list-tasks',
      method: 'GET',
      path: '/api/tasks?limit=20',
      credential: 'student-token',
      expectedStatus: 200,
      peer: true,
    },
    { ...createTask, name: 'create-task' },
    { ...createTask, name: 'create-task-students', perStudent: () => [createTask.path] },
    { name: 'today-loop', method: 'GET', path: '/api/today/loop', credential: 'student-token', expectedStatus: 200 },
    // A study session's write: a graded review moves the card, logs the review, counts the day and its xp, readiness.
    // A failed recall (grade 2) restarts the card at one day: thousands of passing grades of one card would grow
    // its SM-2 interval past the dates PostgreSQL stores.
    // One student's one card from every connection: the contention case, each review queued on the student's lock.
    { ...cardReview, name: 'card-review', path: reviewPath(ids.cardId) },
    // What a deployment sees: each connection another student, reviewing its own cards.
    {
      ...cardReview,
      name: 'card-review-students',
      path: reviewPath('{own card}'),
      perStudent: (student) => student.cardIds.map(reviewPath),
    },
    // The week view: tasks, exams, due decks, the country's holidays and the recurring tasks' projections.
    { name: 'week-schedule', method: 'GET', path: '/api/schedule', credential: 'student-token', expectedStatus: 200 },
    // A phone's first sync of a large account (5,000 tasks, 2,000 cards): every connection asks for its pages in turn,
    // from its own place in the sync, 20 objects a page (the default; list-tasks asks for 20 too, and gets the demo
    // student's 5), each one kind's page by id; held to list-tasks' ceiling and to a list page of its size (issue 38).
    {
      name: 'sync-pull-page',
      method: 'GET',
      path: syncPages[0]!,
      paths: syncPages,
      credential: 'sync-student-token',
      expectedStatus: 200,
      twin: 'list-tasks-20',
    },
    // A list page of the same size as a sync page, as the sync's student: the first 20 of its 5,000 tasks (list-tasks
    // gets the demo student's 5). sync-pull-page's twin: the sync's own work is judged against a list page's, the
    // rows' parsing, JSON and garbage, which grow with the page, being the same.
    {
      name: 'list-tasks-20',
      method: 'GET',
      path: `/api/tasks?limit=${SYNC_PAGE}`,
      credential: 'sync-student-token',
      expectedStatus: 200,
    },
    {
      name: 'v1-invalid-400',
      method: 'GET',
      path: '/api/v1/universities?limit=0',
      credential: 'partner-key',
      expectedStatus: 400,
    },
    { name: 'v1-unauthenticated-401', method: 'GET', path: '/api/v1/health', credential: 'none', expectedStatus: 401 },
    {
      name: 'single-writes-100',
      method: 'POST',
      path: '/api/tasks',
      body: newTask,
      credential: 'student-token',
      expectedStatus: 201,
    },
    {
      name: `sync-push-${SYNC_PUSH_COMMANDS}`,
      method: 'POST',
      path: '/api/sync/commands',
      body: syncPush,
      credential: 'student-token',
      expectedStatus: 200,
      commands: SYNC_PUSH_COMMANDS,
      twin: 'single-writes-100',
      freshUuids: true,
      long: { requests: 10, warmUpRequests: 2, connections: 2, timeoutSeconds: 120 },
    },
  ];
}

const reviewPath = (cardId: string) => `/api/flashcards/cards/${cardId}/reviews`;

export function requestHeaders(
  scenario: Scenario,
  credentials: Pick<Credentials, 'apiKey' | 'studentToken' | 'syncStudentToken'>,
): Record<string, string> {
  const byCredential: Record<Scenario['credential'], Record<string, string>> = {
    'partner-key': { 'x-service-api-key': credentials.apiKey },
    'student-token': { authorization: `Bearer ${credentials.studentToken}` },
    'sync-student-token': { authorization: `Bearer ${credentials.syncStudentToken}` },
    none: {},
  };
  const auth = byCredential[scenario.credential];
  return scenario.body === undefined ? auth : { ...auth, 'content-type': 'application/json' };
}

/** One request as autocannon takes it (its `requests` entries). */
export interface LoadRequest {
  method: Scenario['method'];
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** Its uuids marked FRESH_UUID_MARK are made new for every request (Scenario.freshUuids). */
  freshUuids?: true;
}

/**
 * What each connection sends: the scenario's one request from every connection, or for a many-students scenario a
 * list per connection, the first connection for the first student and so on (one student per connection). A
 * scenario's `paths` are sent in turn by every connection, each starting at another place of the list (the first
 * connection at the first path): every run starts the lists over, and a loaded host answers a few hundred requests a
 * connection in a run, so from one place all would read the same first pages (a full sync's tasks, never its cards).
 */
export function connectionRequests(scenario: Scenario, credentials: Credentials, connections: number): LoadRequest[][] {
  const body = {
    ...(scenario.body === undefined ? {} : { body: JSON.stringify(scenario.body) }),
    ...(scenario.freshUuids ? { freshUuids: true as const } : {}),
  };
  const { perStudent } = scenario;
  const { method } = scenario;
  const headers = requestHeaders(scenario, credentials);
  if (!perStudent) {
    const requests = (scenario.paths ?? [scenario.path]).map((path) => ({ method, path, headers, ...body }));
    if (requests.length === 1) return [requests];
    return Array.from({ length: connections }, (_, connection) => {
      const start = Math.floor((connection * requests.length) / connections);
      return [...requests.slice(start), ...requests.slice(0, start)];
    });
  }
  if (credentials.students.length < connections) {
    throw new Error(`${scenario.name}: ${connections} connections need as many students`);
  }
  return credentials.students.slice(0, connections).map((student) => {
    const headers = requestHeaders(scenario, { ...credentials, studentToken: student.token });
    return perStudent(student).map((path) => ({ method, path, headers, ...body }));
  });
}

/** What is measured: a base URL, and the processes whose CPU the requests cost (found again at each reading). */
export interface Target {
  baseUrl: string;
  pids(): Promise<number[]>;
  /** Those of pids() that are PostgreSQL's backends, so that a measurement can say how much of its CPU they spent. */
  databasePids?(): Promise<number[]>;
}

export interface RunOptions {
  connections: number;
  /** Requests a second over all connections (autocannon's overallRate), or undefined for as many as answered. */
  rate: number | undefined;
  /**
   * Rounds per scenario, each a run of the baseline then one of the service: a shared host's speed drifts within
   * seconds (bare Express's own cost can nearly double within one run), so each round's ratio compares
   * two runs a few seconds apart, and the scenario's ratio is the median of the rounds'.
   */
  rounds: number;
  /** Length of each measured run (each side, each round). */
  durationSeconds: number;
  /** Warm-up of each side before the first round (discarded). */
  warmupSeconds: number;
  /**
   * The warm-up of a process the run has not measured yet (its first scenario), and of the service's first scenario of
   * each surface: a fresh Node process spends its first seconds under load settling, V8's optimizing compiler and the
   * heap's growth on its helper thread, and a loaded host gives it fewer requests a second to do so; a surface's first
   * scenario compiles that surface's path (docs/performance.md, "Running the benchmark").
   */
  firstWarmupSeconds: number;
  /**
   * Quick runs: this many requests (warm-up: a fifth of them) instead of a duration, so a smoke run checks every
   * scenario's statuses however slow the machine is that day.
   */
  requests: number | undefined;
  /** The load generator's cores (taskset list), or undefined to leave it unpinned. */
  loadCores: string | undefined;
}

export interface Measurement {
  requests: number;
  requestsPerSec: number;
  latencyMs: { p50: number; p99: number };
  /** CPU (user + system, every thread) of the target's processes per response, PostgreSQL's backends included. */
  cpuUsPerRequest: number;
  /** Of cpuUsPerRequest, what PostgreSQL's backends spent (a target on PostgreSQL only). */
  databaseCpuUsPerRequest?: number;
  /** Response count by status code, as autocannon saw them. */
  statuses: Record<string, number>;
  /** Why the responses cannot be trusted (wrong status, socket errors); empty when fine. */
  failures: string[];
}

export interface Compared {
  service: Measurement;
  baseline: Measurement;
  /** Median over the rounds of the service's CPU per request ÷ the baseline's. */
  cpuRatio: number;
  /** The lowest and highest round's ratio: how far to trust the median on this host today. */
  cpuRatioRange: [number, number];
  /** The naive peer's side, where it ran: its measurement and the service's ratio to it, as for the baseline. */
  peer?: Measurement;
  peerRatio?: number;
  peerRatioRange?: [number, number];
  /** The twin's side (Scenario.twin), where it has one: its measurement and the service's ratio per command to it. */
  twin?: Measurement;
  twinRatio?: number;
  twinRatioRange?: [number, number];
  /**
   * Each round's CPU a request (µs) of each side, and of it its database backends': what a median hides, such as one
   * side's cost moving between rounds seconds apart (written to the results file, not printed).
   */
  rounds: RoundCpu[];
}

export interface RoundCpu {
  baseline: number;
  service: number;
  serviceDatabase?: number;
  peer?: number;
  peerDatabase?: number;
}

/** A scenario's twin (Scenario.twin): the requests it sends, measured on the service in the scenario's rounds. */
export interface Twin {
  scenario: Scenario;
  requests: LoadRequest[][];
}

/** The yardsticks a scenario is measured against: bare Express always, the naive peer for the writes on PostgreSQL. */
export interface Yardsticks {
  baseline: Target;
  peer: Target | undefined;
}

/**
 * The scenario on the baseline, the peer (where it has one) and the service, in alternating rounds
 * (RunOptions.rounds), after a warm-up of each (discarded). `afterWarmUp` runs between the warm-ups and the first
 * round: the database's maintenance, so that the rounds meet the tables as the warm-up grew them, with that size's
 * statistics (scripts/bench/setup.ts).
 */
export async function compare(
  service: Target,
  yardsticks: Yardsticks,
  scenario: Scenario,
  requests: LoadRequest[][],
  options: RunOptions,
  afterWarmUp: () => Promise<unknown> = async () => {},
  twin?: Twin,
): Promise<Compared> {
  const peer = scenario.peer ? yardsticks.peer : undefined;
  for (const target of [yardsticks.baseline, peer, service]) {
    if (!target) continue;
    // The service's two surfaces are two paths of code (the partner's key and contract, the student's token and
    // contract): its first scenario of each is warmed as a process's first scenario is.
    const path = target === service ? surfaceOf(scenario) : 'all';
    const served = warmed.get(target) ?? new Set<string>();
    const fresh = !served.has(path);
    warmed.set(target, served.add(path));
    await warmUp(
      target,
      requests,
      fresh ? { ...options, warmupSeconds: options.firstWarmupSeconds } : options,
      scenario,
    );
  }
  if (twin) await warmUp(service, twin.requests, options, twin.scenario);
  await afterWarmUp();
  const rounds: Array<{ service: Measurement; baseline: Measurement; peer?: Measurement; twin?: Measurement }> = [];
  for (let round = 0; round < options.rounds; round++) {
    const bare = await measure(yardsticks.baseline, scenario, requests, options);
    const naive = peer && (await measure(peer, scenario, requests, options));
    const served = await measure(service, scenario, requests, options);
    const twinned = twin && (await measure(service, twin.scenario, twin.requests, options));
    rounds.push({
      baseline: bare,
      ...(naive ? { peer: naive } : {}),
      service: served,
      ...(twinned ? { twin: twinned } : {}),
    });
  }
  const ratios = (side: (r: (typeof rounds)[number]) => Measurement | undefined) => {
    const sorted = rounds
      .map((r) => ({ yardstick: side(r)?.cpuUsPerRequest ?? 0, service: r.service.cpuUsPerRequest }))
      .map((r) => (r.yardstick > 0 ? r.service / r.yardstick : 0))
      .sort((a, b) => a - b);
    const range: [number, number] = [round2(sorted[0] ?? 0), round2(sorted[sorted.length - 1] ?? 0)];
    return { median: round2(median(sorted)), range };
  };
  const toBaseline = ratios((r) => r.baseline);
  const toPeer = peer && ratios((r) => r.peer);
  // Per command: the twin's CPU per request stands for its `commands` (1 for a single write), the service's for its
  // own.
  const perCommand = (m: Measurement, s: Scenario) => m.cpuUsPerRequest / (s.commands ?? 1);
  const toTwin =
    twin &&
    (() => {
      const sorted = rounds
        .map((r) => {
          const yardstick = perCommand(r.twin!, twin.scenario);
          return yardstick > 0 ? perCommand(r.service, scenario) / yardstick : 0;
        })
        .sort((a, b) => a - b);
      return {
        median: round2(median(sorted)),
        range: [round2(sorted[0] ?? 0), round2(sorted[sorted.length - 1] ?? 0)] as [number, number],
      };
    })();
  return {
    service: combine(rounds.map((r) => r.service)),
    baseline: combine(rounds.map((r) => r.baseline)),
    cpuRatio: toBaseline.median,
    cpuRatioRange: toBaseline.range,
    ...(toPeer
      ? { peer: combine(rounds.map((r) => r.peer!)), peerRatio: toPeer.median, peerRatioRange: toPeer.range }
      : {}),
    ...(toTwin
      ? { twin: combine(rounds.map((r) => r.twin!)), twinRatio: toTwin.median, twinRatioRange: toTwin.range }
      : {}),
    rounds: rounds.map((r) => ({
      baseline: r.baseline.cpuUsPerRequest,
      service: r.service.cpuUsPerRequest,
      ...(r.service.databaseCpuUsPerRequest === undefined
        ? {}
        : { serviceDatabase: r.service.databaseCpuUsPerRequest }),
      ...(r.peer ? { peer: r.peer.cpuUsPerRequest, peerDatabase: r.peer.databaseCpuUsPerRequest } : {}),
    })),
  };
}

/**
 * The targets (processes) the run has warmed up already, and for the service each surface it has served: a later
 * scenario of theirs needs only its own warm-up.
 */
const warmed = new WeakMap<Target, Set<string>>();

/** Which of the service's surfaces a scenario's request goes to. */
function surfaceOf(scenario: Scenario): 'partner-v1' | 'general' {
  return scenario.path.startsWith('/api/v1/') ? 'partner-v1' : 'general';
}

const round2 = (x: number) => Math.round(x * 100) / 100;

/** The rounds of one side as one measurement: counts and CPU added up, rates averaged, latencies the rounds' median. */
function combine(rounds: Measurement[]): Measurement {
  const requests = rounds.reduce((sum, r) => sum + r.requests, 0);
  const cpuMicros = rounds.reduce((sum, r) => sum + r.cpuUsPerRequest * r.requests, 0);
  const databaseMicros = rounds.reduce((sum, r) => sum + (r.databaseCpuUsPerRequest ?? 0) * r.requests, 0);
  const statuses: Record<string, number> = {};
  for (const r of rounds)
    for (const [code, count] of Object.entries(r.statuses)) statuses[code] = (statuses[code] ?? 0) + count;
  return {
    requests,
    requestsPerSec: Math.round(rounds.reduce((sum, r) => sum + r.requestsPerSec, 0) / rounds.length),
    latencyMs: { p50: median(rounds.map((r) => r.latencyMs.p50)), p99: median(rounds.map((r) => r.latencyMs.p99)) },
    cpuUsPerRequest: requests > 0 ? Math.round(cpuMicros / requests) : 0,
    ...(rounds.some((r) => r.databaseCpuUsPerRequest !== undefined)
      ? { databaseCpuUsPerRequest: requests > 0 ? Math.round(databaseMicros / requests) : 0 }
      : {}),
    statuses,
    failures: [...new Set(rounds.flatMap((r) => r.failures))],
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

function loadOptions(target: Target, requests: LoadRequest[][], options: RunOptions, scenario?: Scenario) {
  // The target's address; each connection's requests (method, path, headers, body) are set by the load generator.
  const first = requests[0]![0]!;
  const base = {
    url: target.baseUrl + first.path,
    method: first.method,
    connections: options.connections,
    ...(options.rate === undefined ? {} : { overallRate: options.rate }),
  };
  // A run of a count of requests ends at autocannon's next sample after the last answer: with its default of one a
  // second, each of a quick run's four runs a scenario lasted at least a second whatever its requests took.
  const counted = { ...base, sampleInt: 100 };
  const long = scenario?.long;
  if (long) {
    const each = { ...counted, connections: long.connections, timeout: long.timeoutSeconds };
    return { warmUp: { ...each, amount: long.warmUpRequests }, measured: { ...each, amount: long.requests } };
  }
  // Quick runs count requests (the warm-up: a fifth of them); full runs count seconds.
  return options.requests
    ? {
        warmUp: { ...counted, amount: Math.ceil(options.requests / 5) },
        measured: { ...counted, amount: options.requests },
      }
    : {
        warmUp: { ...base, duration: options.warmupSeconds },
        measured: { ...base, duration: options.durationSeconds },
      };
}

/** The warm-up: JIT, connection pools and caches settle before anything is counted; its result is discarded. */
async function warmUp(
  target: Target,
  requests: LoadRequest[][],
  options: RunOptions,
  scenario?: Scenario,
): Promise<void> {
  const run = loadOptions(target, requests, options, scenario).warmUp;
  await runLoad(target, options.loadCores, { options: run, requests });
}

async function measure(
  target: Target,
  scenario: Scenario,
  requests: LoadRequest[][],
  options: RunOptions,
): Promise<Measurement> {
  const { result, cpuMicros, databaseMicros } = await runLoad(target, options.loadCores, {
    options: loadOptions(target, requests, options, scenario).measured,
    requests,
  });
  const statuses = Object.fromEntries(
    Object.entries(result.statusCodeStats ?? {}).map(([code, stats]) => [code, stats.count ?? 0]),
  );
  const failures: string[] = [];
  const unexpected = Object.entries(statuses).filter(
    ([code, count]) => code !== String(scenario.expectedStatus) && count > 0,
  );
  if (unexpected.length > 0) {
    failures.push(
      `unexpected statuses ${unexpected.map(([code, count]) => `${code}×${count}`).join(', ')} (expected only ${scenario.expectedStatus})`,
    );
  }
  if (result.errors > 0) failures.push(`${result.errors} connection errors`);
  if (result.timeouts > 0) failures.push(`${result.timeouts} timeouts`);
  if (result.requests.total === 0) failures.push('no responses');
  const perRequest = (micros: number) => (result.requests.total > 0 ? Math.round(micros / result.requests.total) : 0);
  return {
    requests: result.requests.total,
    // Over the run's whole duration: autocannon's own average is per sample, and a run of a count samples every 100 ms.
    requestsPerSec: result.duration > 0 ? Math.round(result.requests.total / result.duration) : 0,
    latencyMs: { p50: result.latency.p50, p99: result.latency.p99 },
    cpuUsPerRequest: perRequest(cpuMicros),
    ...(databaseMicros === undefined ? {} : { databaseCpuUsPerRequest: perRequest(databaseMicros) }),
    statuses,
    failures,
  };
}

const LOAD_SCRIPT = fileURLToPath(new URL('./load.ts', import.meta.url));

type LoadMessage = { measuring: true } | { result: autocannon.Result } | { error: string };

/** What the load generator (load.ts) is sent: autocannon's options, and each connection's requests. */
export interface LoadRun {
  options: autocannon.Options;
  requests: LoadRequest[][];
}

/**
 * The load generator: one child process (load.ts) for the whole bench, pinned like a process of its own, sent one run
 * at a time. A child for each run started Node, tsx and autocannon four times a scenario (two warm-ups, two measured
 * runs), seconds each, most of a quick run's time; what is measured is the target's CPU, never the generator's.
 */
let generator: { child: ChildProcess; cores: string | undefined } | undefined;

function loadGenerator(cores: string | undefined): ChildProcess {
  if (generator && generator.cores === cores && generator.child.connected) return generator.child;
  // The child runs with this process's flags (tsx's loader).
  const [command, args] = pinned(cores, process.execPath, [...process.execArgv, LOAD_SCRIPT]);
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  // Between runs it keeps the bench from ending neither by its process nor by its channel; it ends when the bench
  // does, which closes the channel (load.ts).
  child.unref();
  child.channel?.unref();
  generator = { child, cores };
  return child;
}

/**
 * Runs `run` in the load generator (see load.ts for why a child process), and the CPU the target's processes spent
 * during it (and of it, its database backends').
 */
function runLoad(
  target: Target,
  cores: string | undefined,
  run: LoadRun,
): Promise<{ result: autocannon.Result; cpuMicros: number; databaseMicros: number | undefined }> {
  return new Promise((resolve, reject) => {
    const child = loadGenerator(cores);
    let atStart: Promise<Map<number, number>> = Promise.resolve(new Map());
    const onMessage = (message: LoadMessage) => {
      if ('measuring' in message) {
        atStart = target.pids().then(cpuMicros);
        return;
      }
      done();
      if ('result' in message) {
        const atEnd = target.pids().then(cpuMicros);
        const databasePids = target.databasePids?.();
        Promise.all([atStart, atEnd, databasePids]).then(([start, end, database]) => {
          const only = (pids: number[]) => (readings: Map<number, number>) =>
            new Map([...readings].filter(([pid]) => pids.includes(pid)));
          resolve({
            result: message.result,
            cpuMicros: cpuSpent(start, end),
            databaseMicros: database && cpuSpent(only(database)(start), only(database)(end)),
          });
        }, reject);
      } else reject(new Error(`load generator: ${message.error}`));
    };
    const onError = (error: Error) => {
      done();
      reject(error);
    };
    const onExit = (code: number | null) => {
      done();
      reject(new Error(`load generator exited with code ${code} before answering`));
    };
    const done = () => {
      child.off('message', onMessage).off('error', onError).off('exit', onExit);
      child.channel?.unref();
    };
    // Waiting for its answer keeps the bench running.
    child.channel?.ref();
    child.on('message', onMessage).once('error', onError).once('exit', onExit);
    child.send(run);
  });
}
