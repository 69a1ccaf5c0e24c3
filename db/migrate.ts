import { createRequire } from 'node:module';
import { sql } from 'kysely';
import { Migrator, type Migration } from 'kysely';
import type { Db } from './connect.ts';
import { prepareJobQueues, WEBHOOK_DELIVERY_QUEUE } from './job-queue.ts';
import { migrations } from './migrations/index.ts';

/** The schema version this pg-boss creates and migrates to (pg-boss's own start compares the same number). */
const JOB_SCHEMA_VERSION: number = createRequire(import.meta.url)('pg-boss/version.json').schema;

/** Told before each migration runs: its name, its place among those pending, and how many are pending. */
export type MigrationProgress = (name: string, index: number, pending: number) => void;

/** Brings the schema up to date; throws with the failing migration's name when one fails. */
export async function migrateToLatest(db: Db, onMigration?: MigrationProgress): Promise<string[]> {
  if (await upToDate(db)) return [];
  const provided = onMigration ? await reporting(db, onMigration) : migrations;
  const migrator = new Migrator({ db, provider: { getMigrations: async () => provided } });
  const { error, results = [] } = await migrator.migrateToLatest();
  const failed = results.find((r) => r.status === 'Error');
  if (error) {
    throw new Error(
      `migration ${failed?.migrationName ?? '(unknown)'} failed: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
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

/**
 * Every start migrates, and most find nothing to do: one read says so, where Kysely's migrator (its lock table, lock
 * and state reads) and pg-boss's start cost a restart ~0.3 s of CPU on PGlite. Anything missing takes the full path.
 */
async function upToDate(db: Db): Promise<boolean> {
  const { rows } = await sql<{
    ours: string | null;
    jobs: string | null;
  }>`select to_regclass('kysely_migration')::text as ours, to_regclass('pgboss.version')::text as jobs`.execute(db);
  if (!rows[0]?.ours || !rows[0].jobs) return false;
  // A database that records a migration this code lacks takes the full path too, where the migrator refuses it.
  const { rows: state } = await sql<{ recorded: number; applied: number; version: number | null; queue: boolean }>`
    select (select count(*) from kysely_migration)::int as recorded,
           (select count(*) from kysely_migration where name in (${sql.join(Object.keys(migrations))}))::int as applied,
           (select max(version::int) from pgboss.version) as version,
           exists (select 1 from pgboss.queue where name = ${WEBHOOK_DELIVERY_QUEUE}) as queue`.execute(db);
  const { recorded, applied, version, queue } = state[0]!;
  return recorded === applied && applied === Object.keys(migrations).length && version === JOB_SCHEMA_VERSION && queue;
}
