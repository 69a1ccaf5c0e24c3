// npm start: server/main.ts compiled by esbuild into one ES module (dist/server.mjs, packages left to node_modules;
// what is imported on demand in a chunk beside it),
// then run in this process. Loading ~300 TypeScript files through tsx's loader thread costs a start ~1.3 s of CPU and
// ~90 MB of RSS more than one compiled module does; tests and the CLI keep running the sources through tsx.
// The module is rebuilt (~0.3 s) whenever one of the sources it was built from has changed, so an edit takes effect
// on the next start as it does with tsx. dist/ sits beside server/ and db/, so that the paths the sources resolve
// from import.meta.url (../generated/, ../node_modules/) stay the same. `--build-only` builds without starting
// (npm's postinstall).
import { buildSync } from 'esbuild';
import { setFlagsFromString } from 'node:v8';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const bundle = join(root, 'dist', 'server.mjs');
/** Each source file of the bundle, relative to the root, with the size and mtime it had when it was built. */
const inputsFile = join(root, 'dist', 'server.inputs.json');

try {
  if (!upToDate()) build();
} catch (error) {
  // One line, as every failed start says what to fix (server/main.ts); esbuild has printed the details above it.
  process.stderr.write(`could not start: could not compile the server into dist/ (${error instanceof Error ? error.message.split('\n')[0] : error})\n`);
  process.exit(1);
}
if (!process.argv.includes('--build-only')) {
  // Stack traces name the TypeScript sources (dist/server.mjs.map).
  process.setSourceMapsEnabled(true);
  if (!process.env.DATABASE_URL) boundHeapGrowth();
  await import(pathToFileURL(bundle).href);
}

/**
 * The embedded default (no DATABASE_URL, the same rule as server/config.ts) holds PGlite's ~140 MB of WebAssembly
 * memory beside the JavaScript heap, within an RSS target of 300 MB. Under sustained load V8 lets the old generation
 * grow up to four times what survives a collection (77 MB after start to 170-220 MB, no leak). Growing it by at most
 * half instead held the bench's peak RSS at ~300 MB where it reached ~440 MB, for ~5-10% more CPU per request
 * (measured 2026-11-25; capping it with --max-old-space-size=128 instead cost ~30%). V8 reads this flag at every
 * collection, so unlike the heap's size limits it takes effect when set here, after start-up; on PostgreSQL the
 * process keeps V8's defaults.
 */
function boundHeapGrowth() {
  setFlagsFromString('--heap-growing-percent=50');
}

function upToDate() {
  if (!existsSync(bundle) || !existsSync(inputsFile)) return false;
  const inputs = JSON.parse(readFileSync(inputsFile, 'utf8'));
  return Object.entries(inputs).every(([path, stamp]) => stampOf(join(root, path)) === stamp);
}

function build() {
  const { metafile, outputFiles } = buildSync({
    absWorkingDir: root,
    entryPoints: { server: 'server/main.ts' },
    outdir: join(root, 'dist'),
    // Modules imported on demand only (the demo generator and faker) stay apart, loaded when a first start seeds.
    splitting: true,
    chunkNames: 'server-[name]-[hash]',
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    sourcemap: 'linked',
    metafile: true,
    write: false,
    logLevel: 'warning',
  });
  mkdirSync(join(root, 'dist'), { recursive: true });
  // Each file written aside and renamed into place, the entry module last: a start never imports half a file.
  const entryLast = [...outputFiles].sort((a, b) => Number(a.path === bundle) - Number(b.path === bundle));
  for (const file of entryLast) {
    writeFileSync(`${file.path}.${process.pid}.tmp`, file.contents);
    renameSync(`${file.path}.${process.pid}.tmp`, file.path);
  }
  // Chunks of earlier builds (their names carry their content's hash) would otherwise pile up.
  const current = new Set(outputFiles.map((file) => basename(file.path)));
  for (const name of readdirSync(join(root, 'dist'))) if (/^server-.*\.mjs(\.map)?$/.test(name) && !current.has(name)) rmSync(join(root, 'dist', name), { force: true });
  const inputs = Object.fromEntries(Object.keys(metafile.inputs).map((path) => [path, stampOf(join(root, path))]));
  writeFileSync(inputsFile, JSON.stringify(inputs));
}

function stampOf(path) {
  try {
    const { size, mtimeMs } = statSync(path);
    return `${size}:${mtimeMs}`;
  } catch {
    return 'missing';
  }
}
