// Copies every row of one of the service's databases into another whose schema the same migrations made: how an
// embedded (PGlite) deployment moves to PostgreSQL (app/cli/move-to-postgres.ts). Table by table rather than
// through a dump: the target's schema is the one the service's own migrations make on PostgreSQL (a dump of PGlite's
// catalog would carry its PostgreSQL major version's syntax to an older server, and pg-boss's schema with it), nothing
// needs a superuser, and no second copy of the data is written to disk.
//
// Each row travels as its row type's text form (`row::text` read, `$1::table[]` written): PostgreSQL's own output
// and input functions for every column, so a timestamp keeps its microseconds, a float its digits and a bytea its
// bytes, whatever JavaScript would make of them. All of it is one transaction on the target, ended by a check that
// each table holds the same rows (their number and a sum of their hashes) as the source: the copy lands whole or not
// at all.
import { sql, type RawBuilder, type Transaction } from 'kysely';
import type { Db } from './connect.ts';
import type { Database } from './schema.ts';

/** The schemas the service's data lives in: its own, and pg-boss's (db/job-queue.ts). */
const SCHEMAS = ['public', 'pgboss'];

/**
 * Tables whose rows the target's own migrations write and keep: which migrations ran (Kysely's), and pg-boss's
 * version and queue definitions. They are compared, not copied.
 */
const BOOKKEEPING = new Set([
  'public.kysely_migration',
  'public.kysely_migration_lock',
  'pgboss.version',
  'pgboss.queue',
]);

/** Rows per INSERT: a few megabytes of parameters at most for the widest rows the service keeps. */
const BATCH_ROWS = 1_000;

/** The text forms both sides write and read rows in, whatever the server's or role's defaults. */
const TEXT_FORMS = sql`select set_config('datestyle', 'ISO, YMD', true), set_config('timezone', 'UTC', true),
  set_config('intervalstyle', 'postgres', true), set_config('extra_float_digits', '1', true), set_config('bytea_output', 'hex', true)`;

export interface CopiedTable {
  /** schema.table */
  name: string;
  rows: number;
}

export interface CopyOptions {
  /** Told as each table is copied. */
  onTable?: (name: string, rows: number) => void;
  /** Runs in the target's transaction after the rows are in, before the commit (e.g. keys kept outside the source). */
  beforeCommit?: (trx: Transaction<Database>) => Promise<void>;
}

/** Refused before anything is written; the message says why and what to do. */
export class CopyRefused extends Error {}

/**
 * The tables of `db` that hold data (not the migrations' bookkeeping): none for a new database, or one that the
 * service's migrations ran on but that never served. Each with its rows, when it has any.
 */
export async function tablesWithData(db: Db): Promise<CopiedTable[]> {
  const found: CopiedTable[] = [];
  for (const name of await dataTables(db)) {
    // The counters' backfill (migration 20261124_0007) writes a zero for each counted table of a new database.
    const filter = name === 'public.stat_counter_deltas' ? sql`where delta <> 0` : sql``;
    const { rows } = await sql<{ rows: number }>`select count(*)::int as rows from ${sql.raw(name)} ${filter}`.execute(
      db,
    );
    if (rows[0]!.rows > 0) found.push({ name, rows: rows[0]!.rows });
  }
  return found;
}

/**
 * Copies every data table of `source` into `target`, both migrated to the same version, in one transaction on the
 * target: its tables are emptied first (a new database holds only what its migrations wrote), triggers stay off
 * while rows arrive (the rows of what they maintain, counters and changes, are copied too), sequences continue where
 * the source's are, and every table is checked against the source before the commit.
 */
export async function copyDatabase(source: Db, target: Db, options: CopyOptions = {}): Promise<CopiedTable[]> {
  const tables = await dataTables(source);
  await assertSameSchema(source, target, tables);
  const order = await insertOrder(source, tables);
  // Read in one transaction: every table as of one moment (PGlite's transaction holds the database alone), and a
  // cursor needs one.
  return source
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (reading) => {
      await TEXT_FORMS.execute(reading);
      return target.transaction().execute(async (writing) => {
        await TEXT_FORMS.execute(writing);
        const triggered = await tablesWithTriggers(writing, order);
        for (const name of triggered) await sql`alter table ${sql.raw(name)} disable trigger user`.execute(writing);
        await sql`truncate ${sql.raw(order.map((t) => t.name).join(', '))}`.execute(writing);
        const copied: CopiedTable[] = [];
        for (const table of order) {
          const rows = await copyTable(reading, writing, table);
          options.onTable?.(table.name, rows);
          copied.push({ name: table.name, rows });
        }
        await copySequences(reading, writing);
        for (const table of order) await assertSameRows(reading, writing, table.name);
        for (const name of triggered) await sql`alter table ${sql.raw(name)} enable trigger user`.execute(writing);
        await options.beforeCommit?.(writing);
        return copied;
      });
    });
}

interface TableToCopy {
  name: string;
  /** The columns an INSERT may set (generated ones are computed again). */
  columns: string[];
  /** A foreign key from the table to itself: parents must come before their children, batch after batch. */
  selfReference?: { column: string; referenced: string };
}

/** Every table of the service's schemas but the bookkeeping, as quoted `schema.table`, partitions left to their parent. */
async function dataTables(db: Db): Promise<string[]> {
  const { rows } = await sql<{ name: string; plain: string }>`
    select format('%I.%I', n.nspname, c.relname) as name, n.nspname || '.' || c.relname as plain
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname in (${sql.join(SCHEMAS)}) and c.relkind in ('r', 'p') and not c.relispartition
    order by 1`.execute(db);
  return rows.filter((row) => !BOOKKEEPING.has(row.plain)).map((row) => row.name);
}

/** Each table's columns in order: name, type, generated or not. */
async function columnsOf(db: Db | Transaction<Database>, tables: string[]): Promise<Map<string, string[]>> {
  const { rows } = await sql<{ name: string; columns: string[] }>`
    select c.oid::regclass::text as name,
           array_agg(format('%I %s%s', a.attname, format_type(a.atttypid, a.atttypmod), case when a.attgenerated <> '' then ' generated' else '' end) order by a.attnum) as columns
    from pg_class c join pg_attribute a on a.attrelid = c.oid
    where c.oid = any(array[${sql.join(tables)}]::regclass[]) and a.attnum > 0 and not a.attisdropped
    group by c.oid`.execute(db);
  return new Map(rows.map((row) => [qualified(row.name), row.columns]));
}

/** regclass prints a table of the search path without its schema. */
function qualified(name: string): string {
  return name.includes('.') ? name : `public.${name}`;
}

/** Both databases migrated by this code: the same tables with the same columns, and the same job queues. */
async function assertSameSchema(source: Db, target: Db, tables: string[]): Promise<void> {
  const targetTables = await dataTables(target);
  const missing = tables.filter((t) => !targetTables.includes(t));
  const extra = targetTables.filter((t) => !tables.includes(t));
  if (missing.length > 0 || extra.length > 0) {
    throw new CopyRefused(
      `the two databases' tables differ (only in the source: ${missing.join(', ') || 'none'}; only in the target: ${extra.join(', ') || 'none'})`,
    );
  }
  const [sourceColumns, targetColumns] = await Promise.all([columnsOf(source, tables), columnsOf(target, tables)]);
  for (const table of tables) {
    if (JSON.stringify(sourceColumns.get(table)) !== JSON.stringify(targetColumns.get(table))) {
      throw new CopyRefused(
        `the columns of ${table} differ: ${sourceColumns.get(table)?.join(', ')} in the source, ${targetColumns.get(table)?.join(', ')} in the target`,
      );
    }
  }
  const queues = (db: Db) =>
    sql<{ names: string | null }>`select string_agg(name, ', ' order by name) as names from pgboss.queue`
      .execute(db)
      .then((r) => r.rows[0]!.names);
  const [sourceQueues, targetQueues] = await Promise.all([queues(source), queues(target)]);
  if (sourceQueues !== targetQueues)
    throw new CopyRefused(`the job queues differ: ${sourceQueues} in the source, ${targetQueues} in the target`);
}

/** Referenced tables before the tables that reference them (foreign keys are checked at every INSERT). */
async function insertOrder(db: Db, tables: string[]): Promise<TableToCopy[]> {
  const { rows: keys } = await sql<{ child: string; parent: string; columns: string[]; referenced: string[] }>`
    select conrelid::regclass::text as child, confrelid::regclass::text as parent,
           array(select attname from unnest(conkey) k join pg_attribute on attrelid = conrelid and attnum = k)::text[] as columns,
           array(select attname from unnest(confkey) k join pg_attribute on attrelid = confrelid and attnum = k)::text[] as referenced
    from pg_constraint where contype = 'f'`.execute(db);
  const columns = await columnsOf(db, tables);
  const parents = new Map(tables.map((t) => [t, new Set<string>()]));
  const self = new Map<string, { column: string; referenced: string }>();
  for (const key of keys) {
    const child = qualified(key.child);
    const parent = qualified(key.parent);
    if (!parents.has(child) || !parents.has(parent)) continue;
    if (child !== parent) parents.get(child)!.add(parent);
    else if (key.columns.length === 1) self.set(child, { column: key.columns[0]!, referenced: key.referenced[0]! });
    else throw new CopyRefused(`${child} references itself over several columns, which this copy does not order`);
  }
  const ordered: TableToCopy[] = [];
  const placed = new Set<string>();
  while (placed.size < tables.length) {
    const ready = tables.filter((t) => !placed.has(t) && [...parents.get(t)!].every((p) => placed.has(p)));
    if (ready.length === 0)
      throw new CopyRefused(`foreign keys form a cycle among ${tables.filter((t) => !placed.has(t)).join(', ')}`);
    for (const name of ready) {
      placed.add(name);
      ordered.push({
        name,
        columns: columns
          .get(name)!
          .filter((c) => !c.endsWith(' generated'))
          .map((c) => c.slice(0, c.indexOf(' '))),
        ...(self.has(name) && { selfReference: self.get(name)! }),
      });
    }
  }
  return ordered;
}

async function tablesWithTriggers(db: Transaction<Database>, tables: TableToCopy[]): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select distinct tgrelid::regclass::text as name from pg_trigger where not tgisinternal`.execute(db);
  const triggered = new Set(rows.map((row) => qualified(row.name)));
  return tables.map((t) => t.name).filter((name) => triggered.has(name));
}

/** Streams the table through a cursor, in batches of rows, parents first where it references itself. */
async function copyTable(
  reading: Transaction<Database>,
  writing: Transaction<Database>,
  table: TableToCopy,
): Promise<number> {
  const cursor = sql.id('copied_rows');
  await sql`declare ${cursor} no scroll cursor for ${rowsOf(table)}`.execute(reading);
  const list = sql.raw(table.columns.join(', '));
  let copied = 0;
  for (;;) {
    const { rows } = await sql<{ row: string }>`fetch ${sql.raw(String(BATCH_ROWS))} from ${cursor}`.execute(reading);
    if (rows.length === 0) break;
    // OVERRIDING SYSTEM VALUE: an identity column (events.seq) keeps the source's numbers.
    await sql`insert into ${sql.raw(table.name)} (${list}) overriding system value
      select ${list} from unnest(${rows.map((r) => r.row)}::${sql.raw(table.name)}[])`.execute(writing);
    copied += rows.length;
  }
  await sql`close ${cursor}`.execute(reading);
  return copied;
}

/** The table's rows as text; for a table that references itself, each row after the one it references. */
function rowsOf(table: TableToCopy): RawBuilder<{ row: string }> {
  const name = sql.raw(table.name);
  if (!table.selfReference) return sql`select (copied.*)::text as row from ${name} copied`;
  const column = sql.id(table.selfReference.column);
  const referenced = sql.id(table.selfReference.referenced);
  return sql`with recursive chain (key, depth) as (
      select ${referenced}, 0 from ${name} where ${column} is null
      union all
      select child.${referenced}, chain.depth + 1 from ${name} child join chain on child.${column} = chain.key)
    select (copied.*)::text as row from ${name} copied join chain on chain.key = copied.${referenced} order by chain.depth`;
}

/** Each sequence goes on from the source's last value (events.seq, the changes feed's order). */
async function copySequences(reading: Transaction<Database>, writing: Transaction<Database>): Promise<void> {
  const { rows } = await sql<{ name: string; last: string | null }>`
    select format('%I.%I', schemaname, sequencename) as name, last_value::text as last
    from pg_sequences where schemaname in (${sql.join(SCHEMAS)})`.execute(reading);
  for (const { name, last } of rows) {
    if (last !== null) await sql`select setval(${name}::regclass, ${last}::bigint, true)`.execute(writing);
  }
}

/** The same rows on both sides: their number and the sum of their text's hashes (in any order). */
async function assertSameRows(
  reading: Transaction<Database>,
  writing: Transaction<Database>,
  name: string,
): Promise<void> {
  const summary = sql<{ rows: number; hash: string }>`
    select count(*)::int as rows, coalesce(sum(('x' || substr(md5((checked.*)::text), 1, 15))::bit(60)::bigint), 0)::text as hash
    from ${sql.raw(name)} checked`;
  const [source, target] = await Promise.all([summary.execute(reading), summary.execute(writing)]);
  const [s, t] = [source.rows[0]!, target.rows[0]!];
  if (s.rows !== t.rows || s.hash !== t.hash) {
    throw new Error(
      `${name} differs after the copy (${s.rows} rows in the source, ${t.rows} in the target${s.rows === t.rows ? ', with different contents' : ''}); nothing was written`,
    );
  }
}
