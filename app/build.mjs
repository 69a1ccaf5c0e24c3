// The compiled server and CLI (app/start.mjs builds each when one of its sources has changed): app/main.ts, or
// scripts/cli.ts, and the packages it imports, bundled by esbuild into dist/server.mjs, or dist/cli.mjs (what is
// imported on demand in a chunk beside it). Loading the packages from node_modules made every start slower: resolving
// well over a thousand files and scanning each CommonJS one for its exports. Loaded only to build, so that a start
// that builds nothing never loads esbuild.
import { decode, encode } from '@jridgewell/sourcemap-codec';
import { buildSync } from 'esbuild';
import { chmodSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';

/**
 * Packages left to node_modules: PGlite finds its WebAssembly and file-system bundle beside its own module, argon2 is a
 * native addon, the API reference is served as a file, and pg-native is an optional module pg tries to load.
 */
const EXTERNAL = ['@electric-sql/pglite', '@node-rs/argon2', 'pg-native'];

/**
 * What the service makes on disk is its owner's alone, whatever the umask (db/private-files.ts says why for the data):
 * the modes are given at creation, where a umask can only take bits away.
 */
export const PRIVATE_FILE = 0o600;
const PRIVATE_DIRECTORY = 0o700;

/**
 * Builds dist/<name>.mjs and its chunks from `entry`; returns the paths (relative to `root`) of the files it was built
 * from. Each bundle is built alone: a chunk shared by the two would change the server's files with every CLI edit.
 */
export function build(root, name, entry) {
  const { metafile, outputFiles } = buildSync({
    absWorkingDir: root,
    entryPoints: { [name]: entry },
    outdir: join(root, 'dist'),
    // Modules imported on demand only (the demo generator and faker, the Redis client, each CLI command) stay apart,
    // loaded when needed.
    splitting: true,
    chunkNames: `${name}-[name]-[hash]`,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: EXTERNAL,
    // The CommonJS packages in the bundle require Node's built-in modules, which an ES module has no `require` for.
    banner: {
      js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
    },
    sourcemap: 'linked',
    metafile: true,
    write: false,
    logLevel: 'warning',
  });
  const dist = join(root, 'dist');
  mkdirSync(dist, { recursive: true, mode: PRIVATE_DIRECTORY });
  const bundle = join(dist, `${name}.mjs`);
  // Each file written aside and renamed into place, the entry module last: a start never imports half a file.
  const entryLast = [...outputFiles].sort((a, b) => Number(a.path === bundle) - Number(b.path === bundle));
  for (const file of entryLast) {
    writeFileSync(
      `${file.path}.${process.pid}.tmp`,
      file.path.endsWith('.map') ? ownSourcesOnly(file.text) : file.contents,
      { mode: PRIVATE_FILE },
    );
    renameSync(`${file.path}.${process.pid}.tmp`, file.path);
  }
  // Chunks of earlier builds (their names carry their content's hash) would otherwise pile up.
  const current = new Set(outputFiles.map((file) => basename(file.path)));
  for (const file of readdirSync(dist))
    if (file.startsWith(`${name}-`) && /\.mjs(\.map)?$/.test(file) && !current.has(file))
      rmSync(join(dist, file), { force: true });
  ownerOnly(dist);
  return Object.keys(metafile.inputs);
}

/**
 * Tightens dist/ and what is in it: a build of an earlier release wrote them under the umask (0755 and 0644 under the
 * usual 022), and this file is one of every bundle's inputs, so the first start after the change rebuilds and lands here.
 */
function ownerOnly(dist) {
  chmodSync(dist, PRIVATE_DIRECTORY);
  for (const file of readdirSync(dist)) {
    try {
      chmodSync(join(dist, file), PRIVATE_FILE);
    } catch (error) {
      // Another process building at the same time renamed or removed its file meanwhile.
      if (error.code !== 'ENOENT') throw error;
    }
  }
}

/**
 * A source map that maps our sources only: Node parses the whole map of a module when it loads it and holds one entry
 * per mapped position for the life of the process. With the packages' code (and esbuild's composing of their own
 * maps) the map of dist/server.mjs was 10.5 MB and cost ~100 MB of RSS; stack frames in a package keep their
 * position in dist/ instead. A stretch of package code keeps one unmapped position, so that Node's lookup (the
 * nearest mapping before a position) does not name the source of the code before it.
 */
function ownSourcesOnly(text) {
  const map = JSON.parse(text);
  const ours = map.sources.map((source) => !source.includes('node_modules/'));
  const sourceIndex = renumber(ours);
  const namesUsed = new Array(map.names.length).fill(false);
  const lines = decode(map.mappings).map((line) => {
    const kept = [];
    let inPackage = false;
    for (const segment of line) {
      if (segment.length === 1 || !ours[segment[1]]) {
        if (!inPackage) kept.push([segment[0]]);
        inPackage = true;
        continue;
      }
      inPackage = false;
      if (segment.length === 5) namesUsed[segment[4]] = true;
      kept.push(segment);
    }
    return kept;
  });
  const nameIndex = renumber(namesUsed);
  const mappings = encode(
    lines.map((line) =>
      line.map((s) =>
        s.length === 1
          ? s
          : s.length === 4
            ? [s[0], sourceIndex[s[1]], s[2], s[3]]
            : [s[0], sourceIndex[s[1]], s[2], s[3], nameIndex[s[4]]],
      ),
    ),
  );
  return JSON.stringify({
    ...map,
    sources: map.sources.filter((_, i) => ours[i]),
    sourcesContent: map.sourcesContent?.filter((_, i) => ours[i]),
    names: map.names.filter((_, i) => namesUsed[i]),
    mappings,
  });
}

/** For each kept item its index among the kept ones (undefined for the others). */
function renumber(kept) {
  let next = 0;
  return kept.map((keep) => (keep ? next++ : undefined));
}
