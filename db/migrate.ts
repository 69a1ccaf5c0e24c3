import { Migrator } from 'kysely/migration';
import type { Db } from './connect.ts';
import { prepareJobQueues } from './job-queue.ts';
import { migrations } from './migrations/index.ts';

/** Brings the schema up to date; throws with the failing migration's name when one fails. */
export async function migrateToLatest(db: Db): Promise<string[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error, results = [] } = await migrator.migrateToLatest();
  const failed = results.find((r) => r.status === 'Error');
  if (error) {
    throw new Error(`migration ${failed?.migrationName ?? '(unknown)'} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  // The job engine's own schema is pg-boss's to create and migrate (db/job-queue.ts), after ours.
  await prepareJobQueues(db);
  return results.filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
