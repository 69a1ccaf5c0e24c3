// The databases the tests run on: embedded PGlite by default, or throwaway databases on the PostgreSQL server of
// DATABASE_URL (created for this run and dropped after it, so a developer's own data is never touched).
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
import { seedDemo, seedReference } from '../../db/seed/index.ts';
import { createThrowawayDatabase } from '../../db/throwaway-database.ts';

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
 * its data directory costs a fraction of that. The run makes one, dumps its data directory before and after the
 * migrations, and starts every later embedded database from a dump: as the server starts its data directories from a
 * migrated template (db/pglite-template.ts).
 */
let dumps: Promise<Record<'unmigrated' | 'migrated', Blob>> | undefined;

async function embeddedCopy(state: 'unmigrated' | 'migrated'): Promise<PGlite> {
  dumps ??= (async () => {
    const db = connect({ dataDir: 'memory://' });
    try {
      const pglite = embeddedDatabaseOf(db)!;
      await pglite.waitReady;
      const unmigrated = await pglite.dumpDataDir('none');
      await migrateToLatest(db);
      return { unmigrated, migrated: await pglite.dumpDataDir('none') };
    } finally {
      await db.destroy();
    }
  })();
  return new PGlite('memory://', { ...PGLITE_OPTIONS, loadDataDir: (await dumps)[state] });
}
