// npm run bench [-- --quick] [-- --json]: throughput, latency and memory of the real app under local load.
// Speed and memory targets live here and in bench/targets.json, never in timed unit tests (too noisy there).
// Full runs exit 1 on any missed target; --quick runs are too short to judge targets and fail only on wrong
// statuses. Either run fails when a scenario's responses are not all of the expected status.
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { runScenario, scenarios, toMb, type ScenarioResult } from './bench/scenarios.ts';
import { loadTargets, missedTargets, printJson, printTable, type Summary } from './bench/report.ts';
import { startBenchApp } from './bench/setup.ts';

const args = parseCommandLine();
const run = { connections: 10, durationSeconds: args.quick ? 2 : 10, warmupSeconds: 1 };
// Progress goes to stderr so that --json leaves stdout as one parseable object.
const progress = (message: string) => process.stderr.write(message + '\n');

progress('bench: preparing a fresh database and the app…');
const app = await startBenchApp();
let exitCode = 0;
try {
  const startup = process.memoryUsage();
  const results: ScenarioResult[] = [];
  for (const scenario of scenarios(new Date().getUTCFullYear())) {
    progress(`bench: ${scenario.name} (GET ${scenario.path}, ${run.durationSeconds} s)…`);
    results.push(await runScenario(app, scenario, run));
  }

  const cpu = cpus();
  const summary: Summary = {
    machine: { cpus: cpu.length, cpuModel: cpu[0]?.model.trim() ?? 'unknown', node: process.versions.node },
    engine: app.engine,
    database: app.database,
    limitStore: app.limitStore,
    logging: "pino at level 'info' into a null sink (production logs every request, so its cost is included)",
    mode: args.quick ? 'quick' : 'full',
    ...run,
    startup: { rssMb: toMb(startup.rss), heapUsedMb: toMb(startup.heapUsed) },
    scenarios: results,
  };
  const profile = loadTargets(app.engine);
  const misses = missedTargets(summary, profile);
  const judged = !args.quick;
  const statusesOk = results.every((r) => r.failures.length === 0);
  const ok = statusesOk && (!judged || misses.length === 0);
  if (args.json) printJson(summary, profile, misses, judged, ok);
  else printTable(summary, profile, misses, judged);
  exitCode = ok ? 0 : 1;
} catch (error) {
  progress(`bench failed: ${error instanceof Error ? error.message : String(error)}`);
  exitCode = 1;
} finally {
  await app.close();
}
process.exitCode = exitCode;
// Everything is closed, so the process should end by itself now; if a handle leaked, say so instead of hanging CI.
setTimeout(() => {
  progress('bench: something still holds the event loop 5 s after shutdown; exiting anyway');
  process.exit(exitCode || 1);
}, 5000).unref();

function parseCommandLine() {
  try {
    return parseArgs({ options: { quick: { type: 'boolean', default: false }, json: { type: 'boolean', default: false } } }).values;
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\nusage: npm run bench [-- --quick] [-- --json]\n`);
    process.exit(2);
  }
}
