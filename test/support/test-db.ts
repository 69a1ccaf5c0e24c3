// The database the tests run on: embedded PGlite by default, or a throwaway database on the PostgreSQL server
// of DATABASE_URL (created for this run and dropped after it, so a developer's own data is never touched).
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

export async function createTestDatabase(): Promise<TestDatabase> {
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
  const now = new Date();
  await seedReference(db, { now });
  await seedDemo(db, { seed: TEST_DEMO_SEED, now });
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
