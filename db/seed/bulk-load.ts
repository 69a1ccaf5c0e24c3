// Loading a million rows into empty tables is mostly index and foreign-key upkeep: every row inserted into a b-tree
// at a random place (uuid keys), every child row's foreign key checked by a trigger of its own. On empty tables it is
// far cheaper to build those indexes once from the loaded rows (a sort) and to check each foreign key once (one join
// when the constraint is added back). This drops them for the load and restores them exactly as the catalog had them.
// The caller runs load and restore in ONE transaction: DDL is transactional in PostgreSQL, so a load that fails
// rolls the drops back too, and nobody else ever sees the tables without their indexes (the drops lock them).
// Primary keys and indexes that back constraints (unique, referenced by foreign keys) stay: they cannot go alone.
import { sql } from 'kysely';
import type { Db } from '../connect.ts';

export interface DeferredUpkeep {
  /** Index definitions and foreign keys dropped, rebuilt by restore(). */
  indexes: number;
  foreignKeys: number;
  restore(): Promise<void>;
}

/** Drops the secondary indexes of `tables` and the foreign keys they hold; restore() puts them back. */
export async function deferIndexesAndForeignKeys(trx: Db, tables: readonly string[]): Promise<DeferredUpkeep> {
  const { rows: indexes } = await sql<{ name: string; definition: string }>`
    select indexrelid::regclass::text as name, pg_get_indexdef(indexrelid) as definition
    from pg_index
    where indrelid = any (${tables}::regclass[]) and not indisprimary
      and not exists (select from pg_constraint where conindid = indexrelid)`.execute(trx);
  const { rows: foreignKeys } = await sql<{ table: string; name: string; definition: string }>`
    select conrelid::regclass::text as table, conname as name, pg_get_constraintdef(oid) as definition
    from pg_constraint where contype = 'f' and conrelid = any (${tables}::regclass[])`.execute(trx);
  for (const fk of foreignKeys)
    await sql`alter table ${sql.raw(fk.table)} drop constraint ${sql.id(fk.name)}`.execute(trx);
  for (const index of indexes) await sql`drop index ${sql.raw(index.name)}`.execute(trx);
  return {
    indexes: indexes.length,
    foreignKeys: foreignKeys.length,
    async restore() {
      // The names and definitions come from the catalog as it printed them, so they are quoted as needed.
      for (const index of indexes) await sql.raw(index.definition).execute(trx);
      for (const fk of foreignKeys)
        await sql`alter table ${sql.raw(fk.table)} add constraint ${sql.id(fk.name)} ${sql.raw(fk.definition)}`.execute(
          trx,
        );
    },
  };
}
