// Named prepared statements for the hot queries on PostgreSQL. An unnamed statement (what pg and Kysely send) is
// parsed, analysed and planned again on every execution; a named one is parsed once per connection and then only
// bound and executed. The general task list measured 81-104 µs per statement unnamed and 37-54 µs named
// (pgbench -M extended vs -M prepared, one client, 2026-11-25).
//
// Opt-in per query (executePrepared): a statement whose text varies with its values (an `in (...)` list) would
// prepare a new statement per length on every connection, and a prepared statement may get a generic plan, which
// suits the indexed, per-student lookups it is meant for. Kysely hands pg the SQL text only, so the statement's name is
// looked up by its text in the pool's client (PreparingClient, db/connect.ts). Through a transaction-mode
// connection pooler this needs one that keeps prepared statements per client (PgBouncer >= 1.21).
// PGlite runs the same query as it is.
import type { Compilable } from 'kysely';
import pg from 'pg';
import type { Db } from './connect.ts';

/** Far above the shapes of the opted-in queries (the task list has 32, one per combination of filters). */
const MAX_NAMED_STATEMENTS = 500;

/** Statement text -> name, shared by every connection of the process (each connection parses a name once). */
const names = new Map<string, string>();

/** SQLSTATE 0A000 with this message: a table's columns changed type under a prepared statement (a migration). */
const RESULT_TYPE_CHANGED = 'cached plan must not change result type';

/** Runs `query` as a named prepared statement on PostgreSQL (as it is on PGlite) and returns its rows. */
export async function executePrepared<R>(db: Pick<Db, 'executeQuery'>, query: Compilable<R>): Promise<R[]> {
  const compiled = query.compile();
  if (!names.has(compiled.sql) && names.size < MAX_NAMED_STATEMENTS) names.set(compiled.sql, `prepared_${names.size + 1}`);
  return (await db.executeQuery(compiled)).rows;
}

/** pg's client, sending the statements executePrepared named by their name. */
export class PreparingClient extends pg.Client {
  // pg's overloads (callback, submittable, config object) pass through untouched; Kysely calls (text, values).
  override query(...args: unknown[]): never {
    const [text, values, callback] = args;
    const name = typeof text === 'string' && callback === undefined ? names.get(text) : undefined;
    if (name === undefined) return (super.query as (...a: unknown[]) => never)(...args);
    return this.executeNamed(name, text as string, values as unknown[] | undefined) as never;
  }

  private async executeNamed(name: string, text: string, values: unknown[] | undefined) {
    try {
      return await super.query({ name, text, values });
    } catch (error) {
      if ((error as Error).message !== RESULT_TYPE_CHANGED) throw error;
      // The statement stays broken on this connection until it is prepared again: drop it and run the query once
      // more, parsed anew. Inside a transaction (aborted by the error) the DEALLOCATE fails, and the request with it.
      await super.query(`deallocate ${name}`).catch(() => {
        throw error;
      });
      delete (this as unknown as { connection: { parsedStatements: Record<string, string> } }).connection.parsedStatements[name];
      return await super.query({ name, text, values });
    }
  }
}
