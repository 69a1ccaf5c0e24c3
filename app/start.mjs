// npm start: app/main.ts and the packages it imports, compiled by esbuild into one ES module (dist/server.mjs; what is
// imported on demand in a chunk beside it; app/build.mjs), then run in this process. Loading ~300 TypeScript files
// through tsx's loader thread costs a start ~1.3 s of CPU and ~90 MB of RSS more than one compiled module does; tests
// keep running the sources through tsx. The module is rebuilt (~1 s) whenever one of the sources it was built from has
// changed, so an edit takes effect on the next start as it does with tsx; the packages count as changed when npm has
// changed node_modules (its node_modules/.package-lock.json): checking each of their ~1,700 files took ~60 ms of every
// start. dist/ sits beside db/, so that the paths the sources resolve from import.meta.url (db/'s ../node_modules/)
// stay the same; the bundled specs are found by looking upward (server/contract/bundled-specs.ts).
// `--build-only` builds without starting (npm's postinstall), every bundle. `npm start` runs it as `node
// --v8-pool-size=1 --max-semi-space-size=8 app/start.mjs` (package.json; the bench reads that command line): V8's four
// helper threads, each with its own C allocator arena, held a good part of the embedded default's peak RSS under load,
// and so did the young generation's two semi-spaces of V8's default size, twice the 8 MB given here, which costs little
// more CPU (a minor collection costs what survives it, and a request's garbage dies young; docs/performance.md, "The
// embedded process's memory", has the figures). V8 flags of that kind are read only when the process starts, so they
// can only be given on node's command line.
// `node app/start.mjs --cli ARGS` (npm run cli) runs the operator's CLI, scripts/cli.ts, the same way from a bundle of
// its own (dist/cli.mjs, rebuilt by the same rule): every call is a new process, and under tsx each paid the loading of
// its sources and packages again, most of a short command's CPU.
import { spawnSync } from 'node:child_process';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
/** Each bundle's entry module; the bundle is dist/<name>.mjs. */
const ENTRIES = { server: 'app/main.ts', cli: 'scripts/cli.ts' };
/** What a bundle depends on besides its sources: how it is built, and the installed packages. */
const BUILD_INPUTS = ['app/start.mjs', 'app/build.mjs', 'node_modules/.package-lock.json'];

// The CLI's own arguments follow --cli; a CLI argument is never taken for one of this file's.
const cli = process.argv[2] === '--cli';
const buildOnly = !cli && process.argv.includes('--build-only');
if (buildOnly) {
  // `--build-only NAME` (from a start that found its bundle stale) builds that one; without a name, every bundle.
  const named = process.argv[process.argv.indexOf('--build-only') + 1];
  const names = named !== undefined && Object.hasOwn(ENTRIES, named) ? [named] : Object.keys(ENTRIES);
  for (const name of names) if (!upToDate(name)) await buildOrExit(name);
} else {
  const name = cli ? 'cli' : 'server';
  if (!upToDate(name)) buildInAnotherProcess(name);
  // Stack traces name the TypeScript sources (dist/<name>.mjs.map).
  process.setSourceMapsEnabled(true);
  if (!process.env.DATABASE_URL) tierUpPgliteLater();
  if (cli) {
    // The CLI reads its command line from argv[2] on, as when node runs scripts/cli.ts.
    process.argv.splice(2, 1);
    await import(pathToFileURL(bundleOf('cli')).href);
  } else {
    // Resolves once the server listens (app/main.ts awaits its start at the top level).
    await import(pathToFileURL(bundleOf('server')).href);
    if (!process.env.DATABASE_URL) boundHeapGrowth();
  }
}

/**
 * PGlite is PostgreSQL compiled to WebAssembly. V8 compiles each of its functions quickly (Liftoff) on first use, then
 * again with its optimizing compiler (TurboFan, on background threads) once the function has run for a budget of
 * ~1.8 MB of code. Creating the database, migrating and seeding run thousands of PostgreSQL functions just past that
 * budget once, and recompiling them was a large share of a first start's CPU, on the cores the main thread needs. A
 * budget 30 times larger leaves that one-off code on Liftoff, while what a workload runs over and over still reaches
 * it, only later: starts and restarts got faster with no change in CPU per request beyond the run-to-run noise (the
 * bench's first start and restart figures show it). A CLI command on the embedded database opens it and runs its
 * one-off code the same way. V8 reads the budget when it instantiates a module, so it is set before the server or the
 * CLI (and PGlite with it) is loaded.
 */
function tierUpPgliteLater() {
  setFlagsFromString('--wasm-tiering-budget=54000000');
}

/**
 * The embedded default (no DATABASE_URL, the same rule as app/config.ts) holds PGlite's ~140 MB of WebAssembly
 * memory beside the JavaScript heap, within an RSS target of 300 MB. Under sustained load V8 lets the old generation
 * grow up to four times what survives a collection (no leak, but well past the target). Growing it by at most half
 * instead keeps the bench's peak RSS near the target for a few percent more CPU per request (capping the heap with
 * --max-old-space-size instead cost far more CPU). V8 reads this flag at every collection, so unlike the heap's size
 * limits it takes effect when set after start-up, which is when it is set: during the start the heap grows from
 * nothing to what all survives, and growing it by half at a time there only made more collections. The flag only
 * sizes the limit a collection sets, so the limit the start's last collection set (up to four times what survived it)
 * would hold until the first collection under load: the old generation grew to that limit under the first requests,
 * and that was the process's peak. One full collection right after the flag (tens of ms, once) sets the limit by it
 * from the start. On PostgreSQL the process keeps V8's defaults.
 */
function boundHeapGrowth() {
  setFlagsFromString('--heap-growing-percent=50');
  collectGarbageOnce();
}

/** A full collection now: node exposes `gc` only to contexts made after --expose-gc is set, never to this one. */
function collectGarbageOnce() {
  setFlagsFromString('--expose-gc');
  runInNewContext('gc')();
}

function bundleOf(name) {
  return join(root, 'dist', `${name}.mjs`);
}

/** Each file the bundle was built from, relative to the root, with the size and mtime it had when it was built. */
function inputsFileOf(name) {
  return join(root, 'dist', `${name}.inputs.json`);
}

function upToDate(name) {
  if (!existsSync(bundleOf(name)) || !existsSync(inputsFileOf(name))) return false;
  const inputs = JSON.parse(readFileSync(inputsFileOf(name), 'utf8'));
  return Object.entries(inputs).every(([path, stamp]) => stampOf(join(root, path)) === stamp);
}

async function buildOrExit(name) {
  try {
    await build(name);
  } catch (error) {
    // One line, as every failed start says what to fix (app/main.ts); esbuild has printed the details above it.
    process.stderr.write(
      `could not start: could not compile the ${name === 'cli' ? 'CLI' : 'server'} into dist/ (${error instanceof Error ? error.message.split('\n')[0] : error})\n`,
    );
    process.exit(1);
  }
}

/**
 * Building holds esbuild's output and the source maps it rewrites in memory, ~700 MB of RSS that a server process
 * would keep long after (its heap had grown to hold them). A process of its own returns it when it exits.
 */
function buildInAnotherProcess(name) {
  const built = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--build-only', name], {
    stdio: 'inherit',
  });
  // It has said why it failed.
  if (built.status !== 0) process.exit(1);
}

async function build(name) {
  const { build: buildBundle, PRIVATE_FILE } = await import('./build.mjs');
  const sources = buildBundle(root, name, ENTRIES[name]);
  const inputs = [...sources.filter((path) => !path.startsWith('node_modules/')), ...BUILD_INPUTS];
  writeFileSync(
    inputsFileOf(name),
    JSON.stringify(Object.fromEntries(inputs.map((path) => [path, stampOf(join(root, path))]))),
    { mode: PRIVATE_FILE },
  );
}

function stampOf(path) {
  try {
    const { size, mtimeMs } = statSync(path);
    return `${size}:${mtimeMs}`;
  } catch {
    return 'missing';
  }
}
