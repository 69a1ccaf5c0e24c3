import { Migrator, type Migration } from 'kysely/migration';
import type { Db } from './connect.ts';
import { prepareJobQueues } from './job-queue.ts';
import { migrations } from './migrations/index.ts';

/** Told before each migration runs: its name, its place among those pending, and how many are pending. */
export type MigrationProgress = (name: string, index: number, pending: number) => void;

/** Brings the schema up to date; throws with the failing migration's name when one fails. */
export async function migrateToLatest(db: Db, onMigration?: MigrationProgress): Promise<string[]> {
  const provided = onMigration ? await reporting(db, onMigration) : migrations;
  const migrator = new Migrator({ db, provider: { getMigrations: async () => provided } });
  const { error, results = [] } = await migrator.migrateToLatest();
  const failed = results.find((r) => r.status === 'Error');
  if (error) {
    throw new Error(`migration ${failed?.migrationName ?? '(unknown)'} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  // The job engine's own schema is pg-boss's to create and migrate (db/job-queue.ts), after ours.
  await prepareJobQueues(db);
  return results.filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/**
 * The migrations, each telling `onMigration` when it starts: a long upgrade shows where it is. Pending ones are
 * counted before the migrator starts: on PGlite, a query beside its transaction would wait for it forever.
 */
async function reporting(db: Db, onMigration: MigrationProgress): Promise<Record<string, Migration>> {
  const known = await new Migrator({ db, provider: { getMigrations: async () => migrations } }).getMigrations();
  const pending = known.filter((m) => !m.executedAt).length;
  let index = 0;
  return Object.fromEntries(
    Object.entries(migrations).map(([name, migration]) => [
      name,
      {
        ...migration,
        up: async (trx) => {
          onMigration(name, ++index, pending);
          await migration.up(trx);
        },
      },
    ]),
  );
}
