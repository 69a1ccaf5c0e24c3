// Upkeep of the embedded database (services/maintenance/embedded-vacuum.ts): PGlite runs PostgreSQL with no
// background workers, so no autovacuum clears the dead row versions that every UPDATE and DELETE leaves.
import { sql } from 'kysely';
import type { Db } from '../connect.ts';

/**
 * The schemas whose tables the service writes: its own (public) and pg-boss's (db/job-queue.ts: jobEngine keeps
 * pg-boss's default schema). A schema that does not exist yet lists no table.
 */
export const SERVICE_SCHEMAS = ['public', 'pgboss'] as const;

export interface TableName {
  schema: string;
  name: string;
}

/**
 * The tables of the service's schemas that hold rows: plain tables, each partition of a partitioned one (pg-boss's
 * job table) on its own, and materialized views. A partitioned parent holds nothing itself (VACUUM of it would run
 * over every partition in one statement), and a table's TOAST table is vacuumed with it.
 */
export async function listServiceTables(db: Db): Promise<TableName[]> {
  const { rows } = await sql<TableName>`
    select n.nspname as schema, c.relname as name
    from pg_class c
    join pg_namespace n on n.oid = c.relnamespace
    where c.relkind in ('r', 'm') and n.nspname = any(${[...SERVICE_SCHEMAS]}::text[])
    order by n.nspname, c.relname`.execute(db);
  return rows;
}

/**
 * VACUUM (not FULL: no rewrite, no exclusive lock) of one table: its dead row versions and their index entries are
 * freed for reuse, and its visibility map set. One table per statement, so the pass can yield between them.
 * Outside any transaction (VACUUM refuses to run inside one): on PGlite a Kysely query waits for a transaction in
 * flight to end rather than joining it (db/pglite-dialect.ts).
 */
export async function vacuumTable(db: Db, table: TableName): Promise<void> {
  await sql`vacuum ${sql.id(table.schema, table.name)}`.execute(db);
}
