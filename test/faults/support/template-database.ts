// The database every fault and noisy-neighbour file's own starts from (faultDatabase copies it: CREATE DATABASE …
// TEMPLATE), migrated and holding the reference data, made once per run by mocha's global setup and dropped by its
// teardown. A copy takes a fraction of a second where migrating and seeding a new database took seconds of a loaded
// machine, once per file. The global setup runs in mocha's main process before any worker of a parallel run starts, so
// the workers inherit the template's name in their environment. Loaded by the suites' mocharc files (`require`).
import { connect } from '../../../db/connect.ts';
import { migrateToLatest } from '../../../db/migrate.ts';
import { seedReference } from '../../../db/seed/index.ts';
import { createThrowawayDatabase, type ThrowawayDatabase } from '../../../db/throwaway-database.ts';
import { requiredEnv, TEMPLATE_DATABASE_VARIABLE } from './fixture.ts';

let template: ThrowawayDatabase | undefined;

export async function mochaGlobalSetup(): Promise<void> {
  const made = await createThrowawayDatabase(requiredEnv('DATABASE_URL'), 'sc_fault_template');
  // A template is copied only while nobody is connected to it: this connection ends before any copy is made.
  const db = connect({ databaseUrl: made.url });
  try {
    await migrateToLatest(db);
    await seedReference(db, { now: new Date() });
  } catch (error) {
    await db.destroy();
    await made.drop(); // mocha runs no teardown after a failed setup
    throw error;
  }
  await db.destroy();
  template = made;
  process.env[TEMPLATE_DATABASE_VARIABLE] = new URL(made.url).pathname.slice(1);
}

export async function mochaGlobalTeardown(): Promise<void> {
  await template?.drop();
}
