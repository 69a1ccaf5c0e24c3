// A new embedded database is a copy of a template: a data directory made once by PGlite's initdb and migrated (ours
// and pg-boss's schema), cached in node_modules/.cache. Creating it costs ~5 s of a second WebAssembly instance plus
// ~1.5 s of migrations; copying it costs ~0.1 s. `npm ci` makes the template (postinstall), so that a newcomer's
// first `npm start` is a copy too; a changed migration, PGlite or pg-boss version makes another one.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGLITE_CONF } from './pglite-options.ts';
import { tightenModes } from './private-files.ts';

// From db/ or from the compiled server (dist/server.mjs, app/start.mjs) alike: both lie one level below the root.
const root = fileURLToPath(new URL('../', import.meta.url));
/** Where the templates are kept. */
export const TEMPLATE_CACHE = join(root, 'node_modules', '.cache', 'study-companion-api');
const PREFIX = 'pglite-template-';
const INITDB_SCRIPT = join(root, 'db', 'pglite-initdb.ts');

/**
 * Makes `dataDir` (new, locked by the caller) a migrated database: a copy of the template, made first when missing.
 * Without a writable cache the child process builds the directory in place instead.
 */
export function createDataDir(dataDir: string): void {
  const template = cachedTemplate();
  if (template) cpSync(template, dataDir, { recursive: true });
  else buildInChildProcess(dataDir);
}

/** The template's directory, made now if missing; undefined when the cache cannot be written. */
export function cachedTemplate(): string | undefined {
  const template = join(TEMPLATE_CACHE, PREFIX + templateKey());
  if (existsSync(join(template, 'PG_VERSION'))) return template;
  try {
    mkdirSync(TEMPLATE_CACHE, { recursive: true, mode: 0o700 });
  } catch {
    return undefined;
  }
  // Built aside and renamed into place, so that a process never copies half a template; of two processes building
  // at once, the second's rename fails and it uses the first's. Owner-only before it is shown: a copy keeps its modes.
  const building = mkdtempSync(template + '.building-');
  try {
    buildInChildProcess(building);
    tightenModes(building);
    renameSync(building, template);
  } catch (error) {
    if (!existsSync(join(template, 'PG_VERSION'))) throw error;
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
  removeOtherTemplates(template);
  return template;
}

/**
 * Makes the cached templates owner-only, as a start does to its data directory (the templates hold what every new
 * database starts with); returns how many entries it changed. None while the cache does not exist, nor when another
 * user's install made it (a root-owned node_modules): this process may not read or change it, and it is theirs.
 */
export function tightenTemplateCache(): number {
  try {
    return tightenModes(TEMPLATE_CACHE);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EACCES') return 0;
    throw error;
  }
}

/**
 * PGlite's initdb is a second WebAssembly instance whose memory a process keeps long after it is done (~500 MB of
 * RSS for the server's whole life): a short-lived child process pays for it (db/pglite-initdb.ts).
 */
function buildInChildProcess(dataDir: string): void {
  // Through tsx whether or not this process runs compiled; from the root, where `--import tsx` resolves.
  const child = spawnSync(process.execPath, ['--import', 'tsx', INITDB_SCRIPT, dataDir], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
  });
  if (child.status !== 0)
    throw new Error(
      `could not create the embedded database in ${dataDir}: ${child.stderr.trim() || child.error?.message || `exit ${child.status}`}`,
    );
}

/** Everything the template's content depends on: the engine, its settings and the schema's sources. */
function templateKey(): string {
  const hash = createHash('sha256');
  const require = createRequire(import.meta.url);
  for (const pkg of ['@electric-sql/pglite', 'pg-boss'])
    hash.update(`${pkg}@${packageVersion(require.resolve(pkg))}\n`);
  hash.update(JSON.stringify(PGLITE_CONF));
  const migrations = join(root, 'db', 'migrations');
  for (const file of readdirSync(migrations).sort()) hash.update(file).update(readFileSync(join(migrations, file)));
  for (const file of ['db/job-queue.ts', 'db/migrate.ts', 'db/pglite-initdb.ts'])
    hash.update(readFileSync(join(root, file)));
  return hash.digest('hex').slice(0, 16);
}

/** The version in the package.json above a package's resolved entry point (its exports hide package.json). */
function packageVersion(entry: string): string {
  for (let dir = dirname(entry); dir !== dirname(dir); dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (!existsSync(file)) continue;
    const { name, version } = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
    if (name && version) return version;
  }
  return 'unknown';
}

/** Templates of earlier versions would otherwise pile up, one per change of the schema. */
function removeOtherTemplates(current: string): void {
  for (const entry of readdirSync(TEMPLATE_CACHE)) {
    const path = join(TEMPLATE_CACHE, entry);
    if (entry.startsWith(PREFIX) && path !== current && !entry.includes('.building-'))
      rmSync(path, { recursive: true, force: true });
  }
}
