// A throwaway database on the PostgreSQL server of DATABASE_URL for one fault-suite file, migrated and given the
// credentials its clients need: a partner key and a student's personal key (every scope), both with limits high
// enough that a load test measures the fault, not the quota. The fault suite runs on PostgreSQL + Redis only.
import { connect, type Db } from '../../db/connect.ts';
import { migrateToLatest } from '../../db/migrate.ts';
import { createThrowawayDatabase } from '../../db/throwaway-database.ts';
import { issueApiKey } from '../../server/auth/api-keys.ts';
import { createDemoStudent, DEMO_STUDENT } from '../../server/demo-student.ts';

export interface FaultDatabase {
  /** DATABASE_URL for the server under test. */
  url: string;
  /** A connection of the test's own, to read what the server stored. */
  db: Db;
  partnerKey: string;
  student: { id: string; key: string };
  drop(): Promise<void>;
}

/** DATABASE_URL and REDIS_URL of the fault suite; it refuses to run without both rather than pass vacuously. */
export function faultSuiteServers(): { databaseUrl: string; redisUrl: string } {
  const databaseUrl = process.env.DATABASE_URL;
  const redisUrl = process.env.REDIS_URL;
  if (!databaseUrl || !redisUrl) throw new Error('the fault suite runs on PostgreSQL and Redis: set DATABASE_URL and REDIS_URL');
  return { databaseUrl, redisUrl };
}

export async function createFaultDatabase(namePrefix: string): Promise<FaultDatabase> {
  const throwaway = await createThrowawayDatabase(faultSuiteServers().databaseUrl, namePrefix);
  const db = connect({ databaseUrl: throwaway.url });
  await migrateToLatest(db);
  const { key: partnerKey } = await issueApiKey(db, { name: 'fault suite', per_minute: 1_000_000, per_day: 10_000_000 });
  const { key } = await createDemoStudent(db, new Date());
  const student = await db
    .updateTable('users')
    .set({ plan: 'contract', contract_per_minute: 1_000_000, contract_per_day: 10_000_000, contract_ai_per_hour: 10_000 })
    .where('email', '=', DEMO_STUDENT.email)
    .returning('id')
    .executeTakeFirstOrThrow();
  return {
    url: throwaway.url,
    db,
    partnerKey,
    student: { id: student.id, key },
    async drop() {
      await db.destroy();
      await throwaway.drop();
    },
  };
}
