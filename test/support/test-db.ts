// The database the tests run on: embedded PGlite by default, or a throwaway database on the PostgreSQL server
// of DATABASE_URL (created for this run and dropped after it, so a developer's own data is never touched).
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { connect, describeTarget, type Db, type DbTarget } from '../../db/connect.ts';
import { migrateToLatest } from '../../db/migrate.ts';
import { seedDemo, seedReference } from '../../db/seed/index.ts';

export const DEMO_SEED = 7;

export interface TestDatabase {
  db: Db;
  description: string;
  close(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const serverUrl = process.env.DATABASE_URL;
  let target: DbTarget = { dataDir: 'memory://' };
  let dropDatabase = async () => {};
  if (serverUrl) {
    const name = `sc_test_${randomBytes(6).toString('hex')}`;
    await adminQuery(serverUrl, `create database ${name}`);
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    target = { databaseUrl: url.toString() };
    dropDatabase = () => adminQuery(serverUrl, `drop database if exists ${name} with (force)`);
  }
  const db = connect(target);
  await migrateToLatest(db);
  const now = new Date();
  await seedReference(db, { now });
  await seedDemo(db, { seed: DEMO_SEED, now });
  return {
    db,
    description: describeTarget(target),
    async close() {
      await db.destroy();
      await dropDatabase();
    },
  };
}

async function adminQuery(url: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}
