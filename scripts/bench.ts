// npm run bench [-- --quick] [-- --json] [-- --processes N] [-- --server-cores N] [-- --unpinned] [-- --scale N] [--
// --only a,b] [-- --connections N] [-- --rate N]: the real service (app/start.mjs, as npm start runs it, its own
// process) against a bare Express 5 baseline in the same run, each pinned to its own core(s) and the load generator to
// another where taskset exists. Embedded PGlite in a fresh DATA_DIR by default; PostgreSQL with DATABASE_URL (a
// throwaway database), Redis limit counters with REDIS_URL; the writes also run on a naive Express + pg peer
// (scripts/bench/peer.ts) on PostgreSQL, which an embedded run gets with BENCH_PEER_DATABASE_URL. Also measures the
// start: the first start on an empty database, then a restart (the measured service's own start), the server's RSS,
// and how soon a commit reaches a webhook receiver and an open stream (scripts/bench/event-latency.ts; `--only events`
// for just that). Full runs exit 1 on any missed target (bench/targets.json, ratios to the baseline or the peer);
// --quick runs (CI) are too short to judge targets and fail only on wrong statuses. Speed targets live here, never in
// timed unit tests.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { connect, describeTarget } from '../db/connect.ts';
import { BULK_TIMEOUTS, seedScale } from '../db/seed/scale.ts';
import type { CannedResponse } from './bench/baseline.ts';
import { corePlan, memoryMb, processTree, startHttpProcess, stopProcess, type Started } from './bench/processes.ts';
import {
  loadTargets,
  missedTargets,
  printTable,
  resultJson,
  writeResults,
  type ScenarioSummary,
  type Startup,
  type Summary,
} from './bench/report.ts';
import { compare, connectionRequests, scenarios } from './bench/scenarios.ts';
import type { LoadRequest, RunOptions, Scenario, Target } from './bench/scenarios.ts';
import { measureEventLatency, missedEventTargets } from './bench/event-latency.ts';
import {
  BENCH_PUBLIC_URL,
  createBenchDatabase,
  createPeerDatabase,
  deleteRedisKeys,
  newJwtPrivateKey,
  postgresBackends,
  maintainWithoutAutovacuum,
  prepareCredentials,
  type BenchDatabase,
  type PeerDatabase,
} from './bench/setup.ts';

const root = new URL('../', import.meta.url).pathname;
/** `--only events`: the event latencies (scripts/bench/event-latency.ts), measured after the scenarios. */
const EVENTS = 'events';
/** Connections the load generator keeps open, unless `--connections` says otherwise; the targets are set for these. */
const DEFAULT_CONNECTIONS = 10;
/** What `npm start` runs after `node` (package.json): its flags, then app/start.mjs. */
const startArgs = npmStartArgs();
const args = parseCommandLine();
const processes = Number(args.processes);
/**
 * Students generated on top of the demo data on PostgreSQL, unless `--scale N` says otherwise. A service's tables hold
 * many students' rows, and after the ANALYZE that stands for autovacuum (scripts/bench/setup.ts) the planner plans a
 * student's reads as one student's among many; on the demo data alone the demo student owns nearly every task and
 * review once a scenario has written, and the plans are a one-student database's (scans of the whole table). The
 * embedded default is measured as the small installation it is for, on the demo data.
 */
const POSTGRESQL_STUDENTS = 10_000;
/** `--only a,b`: just these scenarios (names as the table prints them), to measure one change quickly. */
const only = args.only ? args.only.split(',') : undefined;
const selected = (scenario: Pick<Scenario, 'name'>) => !only || only.includes(scenario.name);
const connections = Number(args.connections);
/** Whether a selected scenario is also served by the naive peer (the writes, and list-tasks). */
const peerWanted = scenarios(0).some((scenario) => scenario.peer && selected(scenario));
/**
 * BENCH_PEER_DATABASE_URL: a PostgreSQL server on which an embedded run makes the naive peer's database, so that the
 * embedded writes are judged against the peer's cost in the same rounds (issue 35: within twice their PostgreSQL
 * ratio). Unset, an embedded run has no peer and judges them against bare Express. On PostgreSQL the peer uses the
 * bench's own database.
 */
const peerServerUrl = process.env.BENCH_PEER_DATABASE_URL || undefined;
/**
 * A many-students scenario's connections each act for another generated student with cards (every fourth has a deck):
 * the embedded default, otherwise measured on the demo data alone, gets a few generated students for them.
 */
const manyStudents = scenarios(0).some((scenario) => scenario.perStudent && selected(scenario)) ? connections : 0;
const askedScale = args.scale === undefined ? (process.env.DATABASE_URL ? POSTGRESQL_STUDENTS : 0) : Number(args.scale);
const scale = Math.max(askedScale, manyStudents * 8);
// `--unpinned`: every process where the kernel puts it, as --processes above what the cores can pin runs anyway; to
// compare one process with several on the same footing.
// `--server-cores N` (default: one per process): the web processes share the first N cores; `--processes 2
// --server-cores 1` against `--processes 1` shows what a second process costs per request on the same core, which is
// how two processes can be compared with one on a machine of two cores (the load generator needs the other).
const serverCores = args['server-cores'] === undefined ? processes : Number(args['server-cores']);
const plan = args.unpinned ? undefined : corePlan(serverCores);
// `--connections N` (DEFAULT_CONNECTIONS, for which the targets are set): 1 shows a request's cost without waiting
// behind others (the review scenario's ten connections queue on one student's lock). `--rate N`: N requests a second in
// all instead of as many as the target answers, so that one process and two can be compared at the same load below what
// the cores can serve.
const rate = args.rate === undefined ? undefined : Number(args.rate);
const run: Omit<RunOptions, 'loadCores'> = args.quick
  ? // Quick runs count requests, not seconds; the warm-up is a fifth of them (scripts/bench/scenarios.ts).
    { connections, rate, rounds: 1, durationSeconds: 0, warmupSeconds: 1, firstWarmupSeconds: 1, requests: 100 }
  : { connections, rate, rounds: 5, durationSeconds: 2, warmupSeconds: 2, firstWarmupSeconds: 15, requests: undefined };
// Progress goes to stderr so that --json leaves stdout as one parseable object.
const progress = (message: string) => process.stderr.write(`bench: ${message}\n`);
const databaseUrl = process.env.DATABASE_URL;
const redisUrl = process.env.REDIS_URL;
const redisKeyPrefix = `rl:bench:${randomBytes(6).toString('hex')}:`;
const logLevel = process.env.LOG_LEVEL || 'info';

const cleanups: Array<() => Promise<unknown>> = [];
let exitCode = 0;
try {
  progress(`a fresh ${databaseUrl ? 'PostgreSQL database' : 'embedded database'}…`);
  const database = await createBenchDatabase(databaseUrl);
  cleanups.push(() => database.drop());
  if (redisUrl) cleanups.push(() => deleteRedisKeys(redisUrl, redisKeyPrefix));
  const jwtPrivateKey = await newJwtPrivateKey();
  const serverEnv = environment(database, jwtPrivateKey);

  const firstStart = await measureFirstStart(serverEnv);
  if (scale > 0) await addStudents(database, scale);
  progress('credentials for the requests…');
  const credentials = await prepareCredentials(database, jwtPrivateKey, serverEnv.SECRETS_KEY, manyStudents);
  const tokens = [{ token: credentials.studentToken, studentId: credentials.studentId }, ...credentials.students];
  const peerServer = databaseUrl ?? peerServerUrl;
  let peerDatabase: PeerDatabase | undefined;
  if (peerWanted && peerServer) {
    progress("the naive peer's schema…");
    peerDatabase = await createPeerDatabase(database, peerServer, tokens, (drop) => cleanups.push(drop));
  }

  progress(`the service (${processes} process(es)) and the bare Express baseline…`);
  const service = await startHttpProcess([...profiling(), ...startArgs], {
    env: { ...serverEnv, WEB_CONCURRENCY: String(processes) },
    cores: plan?.server,
    readyPath: '/livez',
    deadlineMs: 120_000,
    cwd: root,
  });
  cleanups.push(() => stopProcess(service.child));
  const afterStartMb = memoryMb(processTree(service.child.pid!)).rssMb;
  // The service's own start is a restart: the first start has made the database already.
  const startup: Startup = { ...firstStart, restartMs: service.readyMs, restartRssMb: afterStartMb };
  const backends = database.postgresName ? postgresBackends(databaseUrl!, database.postgresName) : undefined;
  if (backends) cleanups.push(() => backends.close());
  const serviceTarget: Target = {
    baseUrl: service.baseUrl,
    pids: async () => [...processTree(service.child.pid!), ...((await backends?.pids('service')) ?? [])],
    ...(backends ? { databasePids: () => backends.pids('service') } : {}),
  };

  const list = scenarios(new Date().getUTCFullYear(), credentials).filter(selected);
  const requests = new Map(list.map((scenario) => [scenario, connectionRequests(scenario, credentials, connections)]));
  const canned = await Promise.all(
    list.map((scenario) => probe(service.baseUrl, scenario, requests.get(scenario)![0]![0]!)),
  );
  const cannedDir = mkdtempSync(join(tmpdir(), 'bench-baseline-'));
  cleanups.push(async () => rmSync(cannedDir, { recursive: true, force: true }));
  writeFileSync(join(cannedDir, 'responses.json'), JSON.stringify(canned));
  const baseline = await startHttpProcess(
    ['--import', 'tsx', 'scripts/bench/baseline.ts', join(cannedDir, 'responses.json')],
    { env: process.env, cores: plan?.server, readyPath: '/', deadlineMs: 30_000, cwd: root },
  );
  cleanups.push(() => stopProcess(baseline.child));
  const baselineTarget: Target = { baseUrl: baseline.baseUrl, pids: async () => processTree(baseline.child.pid!) };
  let peerTarget: Target | undefined;
  if (peerDatabase) {
    const peerBackends = postgresBackends(peerDatabase.serverUrl, peerDatabase.name);
    cleanups.push(() => peerBackends.close());
    // Profiled as the service is (BENCH_CPU_PROF), so that their parts can be set side by side.
    const peer = await startHttpProcess([...profiling(), '--import', 'tsx', 'scripts/bench/peer.ts'], {
      env: { ...process.env, DATABASE_URL: peerDatabase.url },
      cores: plan?.server,
      readyPath: '/',
      deadlineMs: 30_000,
      cwd: root,
    });
    cleanups.push(() => stopProcess(peer.child));
    peerTarget = {
      baseUrl: peer.baseUrl,
      pids: async () => [...processTree(peer.child.pid!), ...(await peerBackends.pids('peer'))],
      databasePids: () => peerBackends.pids('peer'),
    };
  }

  const options: RunOptions = { ...run, loadCores: plan?.load };
  // A scenario's twin (Scenario.twin) runs in its rounds on the service, whether or not --only names it too.
  const twinOf = (scenario: Scenario) => {
    const twin =
      scenario.twin === undefined
        ? undefined
        : scenarios(new Date().getUTCFullYear(), credentials).find((each) => each.name === scenario.twin);
    return twin && { scenario: twin, requests: connectionRequests(twin, credentials, connections) };
  };
  const results: ScenarioSummary[] = [];
  let maintained = false;
  const maintain = async () => {
    if (database.postgresName) maintained = (await maintainWithoutAutovacuum(database.env.DATABASE_URL!)) || maintained;
  };
  for (const scenario of list) {
    const sides = scenario.peer && peerTarget ? 'the baseline, the peer' : 'the baseline';
    const each = run.requests ? `${run.requests} requests` : `${run.durationSeconds} s`;
    const what = `${scenario.method} ${scenario.path}`;
    progress(`${scenario.name} (${what}, ${run.rounds} round(s) of ${each} on ${sides}, then on the service)…`);
    const yardsticks = { baseline: baselineTarget, peer: peerTarget };
    const twin = twinOf(scenario);
    const scenarioRequests = requests.get(scenario)!;
    const compared = await compare(serviceTarget, yardsticks, scenario, scenarioRequests, options, maintain, twin);
    results.push({
      name: scenario.name,
      method: scenario.method,
      path: scenario.path,
      expectedStatus: scenario.expectedStatus,
      ...(scenario.commands ? { commands: scenario.commands } : {}),
      ...(twin ? { twinName: twin.scenario.name } : {}),
      ...compared,
      throughputRatio: ratio(compared.service.requestsPerSec, compared.baseline.requestsPerSec),
    });
  }

  // After the CPU scenarios, whose figures its second process and its writes would disturb.
  const events =
    !only || only.includes(EVENTS)
      ? await measureEventLatency({
          serviceUrl: service.baseUrl,
          studentToken: credentials.studentToken,
          samples: args.quick ? 10 : 50,
          progress,
          ...(database.postgresName
            ? { writer: { args: startArgs, env: serverEnv, cores: plan?.server, cwd: root } }
            : {}),
        })
      : undefined;

  const cpu = cpus();
  const summary: Summary = {
    commit: commit(),
    at: new Date().toISOString(),
    machine: {
      cpus: cpu.length,
      cpuModel: cpu[0]?.model.trim() ?? 'unknown',
      node: process.versions.node,
      loadAverage: loadavg(),
    },
    engine: database.engine,
    database: describeTarget(database.target),
    scaleStudents: scale,
    limitStore: redisUrl ? `Redis (prefix ${redisKeyPrefix})` : 'in-process memory',
    peerDatabase: peerDatabase ? describeTarget({ databaseUrl: peerDatabase.url }) : null,
    maintainedAfterWarmUps: maintained,
    logLevel,
    processes,
    pinning: plan ?? null,
    mode: args.quick ? 'quick' : 'full',
    ...run,
    startup,
    rss: { afterStartMb, peakMb: memoryMb(processTree(service.child.pid!)).peakRssMb },
    scenarios: results,
    ...(events ? { events } : {}),
  };
  const profile = loadTargets(database.engine);
  const misses = [...missedTargets(summary, profile), ...missedEventTargets(events, profile?.events)];
  const unjudged = args.quick
    ? '--quick runs are too short'
    : connections !== DEFAULT_CONNECTIONS || rate !== undefined
      ? `they are set for ${DEFAULT_CONNECTIONS} connections sending as fast as they are answered`
      : undefined;
  const judged = unjudged === undefined;
  const statusesOk = results.every((r) => r.service.failures.length === 0 && r.baseline.failures.length === 0);
  const ok = statusesOk && (!judged || misses.length === 0);
  const file = writeResults(summary, profile, misses, judged, ok);
  if (args.json) console.log(JSON.stringify(resultJson(summary, profile, misses, judged, ok), null, 2));
  else printTable(summary, profile, misses, unjudged, file);
  exitCode = ok ? 0 : 1;
} catch (error) {
  progress(`failed: ${error instanceof Error ? error.message : String(error)}`);
  exitCode = 1;
} finally {
  // Last started, first stopped: the processes before the database they use.
  for (const cleanup of cleanups.reverse()) await cleanup().catch((error) => progress(`cleanup: ${String(error)}`));
}
process.exitCode = exitCode;
// Everything is closed, so the process should end by itself now; if a handle leaked, say so instead of hanging CI.
setTimeout(() => {
  progress('something still holds the event loop 5 s after shutdown; exiting anyway');
  process.exit(exitCode || 1);
}, 5000).unref();

/** The server's variables: the caller's, pointed at the bench's database, key and Redis prefix, on a free port. */
function environment(database: BenchDatabase, jwtPrivateKey: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['DATABASE_URL', 'DATA_DIR', 'WEB_CONCURRENCY', 'METRICS_PORT', 'AI_BASE_URL', 'AI_API_KEY'])
    delete env[name];
  return {
    ...env,
    ...database.env,
    PORT: '0',
    PUBLIC_URL: BENCH_PUBLIC_URL,
    JWT_PRIVATE_KEY: jwtPrivateKey,
    // Required with DATABASE_URL (it seals stored secrets); a throwaway database gets a throwaway key.
    ...(database.postgresName ? { SECRETS_KEY: process.env.SECRETS_KEY || randomBytes(32).toString('base64') } : {}),
    LOG_LEVEL: logLevel,
    REDIS_KEY_PREFIX: redisKeyPrefix,
    // The event latencies' receiver listens on loopback.
    WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
    // Stops between phases need no drain: no request is in flight then.
    SHUTDOWN_DRAIN_SECONDS: '0',
  };
}

/**
 * `npm start` as a newcomer runs it, on the still empty database: the time to its first answered request and its
 * RSS then. One process, so on PostgreSQL too the figures are one web process's. The server's bundle is brought up to
 * date first, as `npm ci` does (app/start.mjs): after an edit, the first start would otherwise include compiling
 * it (~2-4 s).
 */
async function measureFirstStart(env: NodeJS.ProcessEnv): Promise<Pick<Startup, 'firstStartMs' | 'firstStartRssMb'>> {
  progress('the server bundle, if a source changed…');
  execFileSync(process.execPath, ['app/start.mjs', '--build-only'], { cwd: root, stdio: 'inherit' });
  progress('first start of the service, on the empty database…');
  const started: Started = await startHttpProcess(startArgs, {
    env,
    cores: plan?.server,
    readyPath: '/livez',
    deadlineMs: 120_000,
    cwd: root,
  });
  const { rssMb } = memoryMb(processTree(started.child.pid!));
  await stopProcess(started.child);
  return { firstStartMs: started.readyMs, firstStartRssMb: rssMb };
}

/**
 * The arguments `npm start` gives node (its script is `exec node <flags> app/start.mjs`), so that the bench measures
 * the process a newcomer runs, with the same V8 flags, without npm's own process around it.
 */
function npmStartArgs(): string[] {
  const script: string = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts.start;
  const words = script.split(/\s+/);
  if (words[0] !== 'exec' || words[1] !== 'node' || words.at(-1) !== 'app/start.mjs') {
    throw new Error(`package.json's start script is not "exec node [flags] app/start.mjs": ${script}`);
  }
  return words.slice(2);
}

/**
 * BENCH_CPU_PROF=DIR: the measured service and the naive peer write V8 CPU profiles into DIR when they stop
 * (NODE_OPTIONS refuses --cpu-prof); each file's name carries its process's pid.
 */
function profiling(): string[] {
  const dir = process.env.BENCH_CPU_PROF;
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [];
}

/** `--scale N` (POSTGRESQL_STUDENTS by default on PostgreSQL): N generated students on top of the demo data, so the leaderboards, lists and plans run at that size. */
async function addStudents(database: BenchDatabase, students: number): Promise<void> {
  const db = connect(database.target, { timeouts: BULK_TIMEOUTS });
  try {
    const started = performance.now();
    await seedScale(db, {
      students,
      onChunk: (done) =>
        progress(`seeded ${done.students.toLocaleString('en')} / ${students.toLocaleString('en')} students`),
    });
    progress(`${students.toLocaleString('en')} students in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    await db.destroy();
  }
}

/** One request first: a wrong status shows its body here instead of a bare count after seconds of load. */
async function probe(baseUrl: string, scenario: Scenario, request: LoadRequest): Promise<CannedResponse> {
  const { method, path, headers } = request;
  const res = await fetch(baseUrl + path, { method, headers, body: request.body });
  const body = await res.text();
  if (res.status !== scenario.expectedStatus) {
    const expected = scenario.expectedStatus;
    const answered = `answered ${res.status}, expected ${expected}: ${body.slice(0, 500)}`;
    throw new Error(`${scenario.name}: ${method} ${path} ${answered}`);
  }
  const credentialHeader = Object.keys(headers).find(
    (name) => name === 'x-service-api-key' || name === 'authorization',
  );
  const contentType = res.headers.get('content-type') ?? 'application/json';
  return { method, url: path, credentialHeader, status: res.status, contentType, body };
}

function ratio(service: number, baseline: number): number {
  return baseline > 0 ? Math.round((service / baseline) * 100) / 100 : 0;
}

function commit(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
    const dirty =
      execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: root, encoding: 'utf8' }).trim() !==
      '';
    return dirty ? `${head}+changes` : head;
  } catch {
    return 'unknown';
  }
}

function parseCommandLine() {
  try {
    const { values } = parseArgs({
      options: {
        quick: { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
        processes: { type: 'string', default: '1' },
        scale: { type: 'string' },
        only: { type: 'string' },
        unpinned: { type: 'boolean', default: false },
        connections: { type: 'string', default: String(DEFAULT_CONNECTIONS) },
        rate: { type: 'string' },
        'server-cores': { type: 'string' },
      },
    });
    const known = [...scenarios(0).map((scenario) => scenario.name), EVENTS];
    const unknown = values.only?.split(',').filter((name) => !known.includes(name)) ?? [];
    if (unknown.length > 0)
      throw new Error(`--only: no scenario ${unknown.join(', ')} (scenarios: ${known.join(', ')})`);
    if (values.scale !== undefined && !/^\d+$/.test(values.scale))
      throw new Error('--scale takes a number of students');
    if (!/^[1-9]\d*$/.test(values.processes)) throw new Error('--processes takes a whole number ≥ 1');
    if (values['server-cores'] !== undefined && !/^[1-9]\d*$/.test(values['server-cores']))
      throw new Error('--server-cores takes a whole number ≥ 1');
    if (!/^[1-9]\d*$/.test(values.connections)) throw new Error('--connections takes a whole number ≥ 1');
    if (values.rate !== undefined && !/^[1-9]\d*$/.test(values.rate))
      throw new Error('--rate takes a whole number of requests a second ≥ 1');
    if (Number(values.processes) > 1 && !process.env.DATABASE_URL)
      throw new Error('--processes above 1 needs DATABASE_URL: the embedded database serves from one process');
    return values;
  } catch (error) {
    process.stderr.write(
      `${error instanceof Error ? error.message : String(error)}\nusage: npm run bench [-- --quick] [-- --json] [-- --processes N] [-- --unpinned] [-- --scale N] [-- --only a,b] [-- --connections N] [-- --rate N] [-- --server-cores N]\n`,
    );
    process.exit(2);
  }
}
