// The databases the tests run on: embedded PGlite by default, or throwaway databases on the PostgreSQL server of
// DATABASE_URL (created for this run and dropped after it, so a developer's own data is never touched).
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'kysely';
import {
  connect,
  describeTarget,
  embeddedDatabaseOf,
  PGLITE_OPTIONS,
  type Db,
  type DbTarget,
} from '../../db/connect.ts';
import { migrateToLatest } from '../../db/migrate.ts';
import { cachedTemplate } from '../../db/pglite-template.ts';
import { seedDemo, seedReference } from '../../db/seed/index.ts';
import { createThrowawayDatabase } from '../../db/throwaway-database.ts';
import { DUMP_STATES, dumpFile, type DumpState } from './embedded-dumps.ts';

/** Not the default seed, so tests cannot lean on the exact demo data a developer sees. */
const TEST_DEMO_SEED = 7;

export interface TestDatabase {
  db: Db;
  /** The throwaway database's URL on PostgreSQL; undefined on embedded PGlite. */
  url: string | undefined;
  description: string;
  close(): Promise<void>;
}

/** A new, migrated, empty database on the engine the run uses. */
export async function createFreshDatabase(): Promise<TestDatabase> {
  const serverUrl = process.env.DATABASE_URL;
  let target: DbTarget;
  let dropDatabase = async () => {};
  if (serverUrl) {
    const throwaway = await createThrowawayDatabase(serverUrl, 'sc_test');
    target = { databaseUrl: throwaway.url };
    dropDatabase = throwaway.drop;
  } else {
    target = { pglite: await embeddedCopy('migrated') };
  }
  const db = connect(target);
  await migrateToLatest(db);
  return {
    db,
    url: 'databaseUrl' in target ? target.databaseUrl : undefined,
    description: describeTarget(target),
    async close() {
      await db.destroy();
      await dropDatabase();
    },
  };
}

/**
 * Drops a test database on the PostgreSQL server of DATABASE_URL that its process could not drop: a worker of a
 * parallel run is ended by process.exit (run-gate.ts). Its sessions ended with it; `force` ends any that linger.
 */
export async function dropServerDatabase(url: string): Promise<void> {
  const server = connect({ databaseUrl: process.env.DATABASE_URL! });
  try {
    await sql`drop database if exists ${sql.id(new URL(url).pathname.slice(1))} with (force)`.execute(server);
  } finally {
    await server.destroy();
  }
}

/** A process's shared database: reference data and demo data of the test seed. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const database = await createFreshDatabase();
  const now = new Date();
  await seedReference(database.db, { now });
  await seedDemo(database.db, { seed: TEST_DEMO_SEED, now });
  return database;
}

/** A new, migrated, empty embedded database in memory, whichever engine the run uses. */
export async function createEmbeddedDatabase(): Promise<Db> {
  const db = connect({ pglite: await embeddedCopy('migrated') });
  await migrateToLatest(db);
  return db;
}

/** A new embedded database in memory with no migration applied yet, for a test of migrating old data. */
export async function createUnmigratedEmbeddedDatabase(): Promise<Db> {
  return connect({ pglite: await embeddedCopy('unmigrated') });
}

/**
 * A new PGlite database costs seconds of initdb in a WebAssembly instance, and the migrations more; loading a copy of
 * its data directory costs a fraction of that. The migrated state is the server's own template (db/pglite-template.ts,
 * made by `npm ci` and kept in node_modules/.cache), and the unmigrated one a database just made by initdb: each is
 * kept as the tar PGlite loads into memory (embedded-dumps.ts), made once by the run's start (run-gate.ts) or by the
 * first process that needs it, so that test processes build no database but read the file.
 */
const dumps: Partial<Record<DumpState, Promise<Blob>>> = {};

async function embeddedCopy(state: DumpState): Promise<PGlite> {
  const dump = await (dumps[state] ??= cachedDump(state));
  return new PGlite('memory://', { ...PGLITE_OPTIONS, loadDataDir: dump });
}

/** Makes the dumps that are missing from the cache. */
export async function prepareEmbeddedDumps(): Promise<void> {
  await Promise.all(DUMP_STATES.map(cachedDump));
}

async function cachedDump(state: DumpState): Promise<Blob> {
  const file = dumpFile(state);
  const build = state === 'migrated' ? () => templateDump(file && cachedTemplate()) : () => dumpAfter(async () => {});
  // Without a writable cache: made in this process, as before there was a template.
  if (!file) return build();
  if (existsSync(file)) return new Blob([readFileSync(file)]);
  const dump = await build();
  // Written aside and renamed into place, so that another process never reads half a file.
  const aside = `${file}.${process.pid}`;
  writeFileSync(aside, Buffer.from(await dump.arrayBuffer()), { mode: 0o600 });
  renameSync(aside, file);
  return dump;
}

/** The template's data directory (a copy of it opened, as a start opens one) as a dump. */
async function templateDump(template: string | undefined): Promise<Blob> {
  if (!template) return dumpAfter(async (db) => migrateToLatest(db));
  const directory = mkdtempSync(join(tmpdir(), 'sc-test-template-'));
  try {
    const db = connect({ dataDir: directory });
    try {
      const pglite = embeddedDatabaseOf(db)!;
      await pglite.waitReady;
      return await pglite.dumpDataDir('none');
    } finally {
      await db.destroy();
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

/** A new database in memory (initdb), the change, and its data directory's dump. */
async function dumpAfter(change: (db: Db) => Promise<unknown>): Promise<Blob> {
  const db = connect({ dataDir: 'memory://' });
  try {
    const pglite = embeddedDatabaseOf(db)!;
    await pglite.waitReady;
    await change(db);
    return await pglite.dumpDataDir('none');
  } finally {
    await db.destroy();
  }
}
