// The databases the tests run on: embedded PGlite by default, or throwaway databases on the PostgreSQL server of
// DATABASE_URL (created for this run and dropped after it, so a developer's own data is never touched).
import { connect, describeTarget, type Db, type DbTarget } from '../../db/connect.ts';
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
  let target: DbTarget = { dataDir: 'memory://' };
  let dropDatabase = async () => {};
  if (serverUrl) {
    const throwaway = await createThrowawayDatabase(serverUrl, 'sc_test');
    target = { databaseUrl: throwaway.url };
    dropDatabase = throwaway.drop;
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

/** The run's shared database: reference data and demo data of the test seed. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const database = await createFreshDatabase();
  const now = new Date();
  await seedReference(database.db, { now });
  await seedDemo(database.db, { seed: TEST_DEMO_SEED, now });
  return database;
}
