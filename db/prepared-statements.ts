// Named prepared statements for the hot queries. An unnamed statement (what pg, PGlite and Kysely send) is parsed,
// analysed and planned again on every execution; a named one is parsed once per connection and then only bound and
// executed: for the general task list that more than halved the database's CPU per statement on both engines (on
// PGlite planning reads each relation's size from the file system, and an unnamed statement's five messages go one
// by one).
//
// Opt-in per query (executePrepared): a statement whose text varies with its values (an `in (...)` list) would
// prepare a new statement per length on every connection, and a prepared statement may get a generic plan, which
// suits the indexed, per-student lookups it is meant for. Kysely hands the driver the SQL text only, so the
// statement's name is looked up by its text: in the pool's client on PostgreSQL (PreparingClient, db/connect.ts), in
// PGlite's query and its transactions' (prepareStatementsOn). Through a transaction-mode connection pooler this needs
// one that keeps prepared statements per client (PgBouncer >= 1.21, max_prepared_statements); behind an older one,
// DATABASE_PREPARED_STATEMENTS=off (the default with DATABASE_POOLER=transaction) sends every query unnamed.
import { parse as pgliteResults, protocol, type PGlite, type Results, type Transaction } from '@electric-sql/pglite';
import type { Compilable, CompiledQuery, Kysely, RawBuilder } from 'kysely';
import pg from 'pg';

/** Far above the shapes of the opted-in queries (the task list has 32, one per combination of filters). */
const MAX_NAMED_STATEMENTS = 500;

/** Statement text -> name, shared by every connection of the process (each connection parses a name once). */
const names = new Map<string, string>();

/** SQLSTATE 0A000 with this message: a table's columns changed type under a prepared statement (a migration). */
const RESULT_TYPE_CHANGED = 'cached plan must not change result type';

/** Runs `query` (a query builder's, or a raw `sql` template's) as a named prepared statement and returns its rows. */
export async function executePrepared<R>(
  db: Pick<Kysely<any>, 'executeQuery' | 'getExecutor'>,
  query: Compilable<R> | RawBuilder<R> | CompiledQuery<R>,
): Promise<R[]> {
  const compiled = 'isRawBuilder' in query ? query.compile(db) : 'compile' in query ? query.compile() : query;
  if (!names.has(compiled.sql) && names.size < MAX_NAMED_STATEMENTS)
    names.set(compiled.sql, `prepared_${names.size + 1}`);
  return (await db.executeQuery(compiled)).rows;
}

/** A placeholder for one of a compiledOnce query's values. */
class Placeholder {
  constructor(readonly key: string) {}
}

/**
 * A hot query whose shape never changes, built and compiled by Kysely once per dialect instead of on every run (for
 * the daily loop's, building and compiling were a fifth of the request's CPU); each run binds its values and runs it
 * as a named prepared statement. `build` receives a placeholder for each value and must pass each to the query as a
 * value only (a parameter), never compute with it or branch on it.
 */
export function compiledOnce<V extends object, R>(
  keys: ReadonlyArray<NoInfer<keyof V & string>>,
  build: (db: Kysely<any>, values: V) => Compilable<R>,
) {
  const byDialect = new Map<unknown, CompiledQuery<R>>();
  return async (db: Kysely<any>, values: V): Promise<R[]> => {
    const adapter = db.getExecutor().adapter.constructor;
    let template = byDialect.get(adapter);
    if (!template) {
      template = build(db, Object.fromEntries(keys.map((key) => [key, new Placeholder(key)])) as V).compile();
      const used = new Set(
        template.parameters.flatMap((parameter) => (parameter instanceof Placeholder ? [parameter.key] : [])),
      );
      const unused = keys.filter((key) => !used.has(key));
      if (unused.length > 0)
        throw new Error(`compiledOnce: the query does not take ${unused.join(', ')} as a parameter`);
      byDialect.set(adapter, template);
    }
    const parameters = template.parameters.map((parameter) =>
      parameter instanceof Placeholder ? values[parameter.key as keyof V] : parameter,
    );
    return executePrepared(db, { ...template, parameters });
  };
}

/** pg's client, sending the statements executePrepared named by their name. */
export class PreparingClient extends pg.Client {
  /** Statements whose result type changed inside a transaction, which the error aborted: prepared again at their next use. */
  private readonly stale = new Set<string>();

  // pg's overloads (callback, submittable, config object) pass through untouched; Kysely calls (text, values).
  override query(...args: unknown[]): never {
    const [text, values, callback] = args;
    const name = typeof text === 'string' && callback === undefined ? names.get(text) : undefined;
    if (name === undefined) return (super.query as (...a: unknown[]) => never)(...args);
    return this.executeNamed(name, text as string, values as unknown[] | undefined) as never;
  }

  private async executeNamed(name: string, text: string, values: unknown[] | undefined) {
    if (this.stale.delete(name)) await this.forget(name);
    try {
      return await super.query({ name, text, values });
    } catch (error) {
      if ((error as Error).message !== RESULT_TYPE_CHANGED) throw error;
      // The statement stays broken on this connection until it is prepared again: drop it and run the query once
      // more, parsed anew. Inside a transaction (aborted by the error) the DEALLOCATE fails: the request fails with
      // the error, and the statement is dropped at its next use.
      try {
        await this.forget(name);
      } catch {
        this.stale.add(name);
        throw error;
      }
      return await super.query({ name, text, values });
    }
  }

  private async forget(name: string) {
    await super.query(`deallocate ${name}`);
    delete (this as unknown as { connection: { parsedStatements: Record<string, string> } }).connection
      .parsedStatements[name];
  }
}

type Serializer = (value: unknown) => string;
type QueryOptions = Parameters<PGlite['query']>[2];

/**
 * PGlite's query and its transactions' query, running the statements executePrepared named as named statements:
 * parsed once (with their parameter types, which pick each value's serializer as PGlite's own query does), then bound
 * and executed in one exchange. Inside a transaction the statement runs as the transaction's own query would (under
 * the query lock only, no write to the file system before the commit), since the writes of a request run there and
 * an unnamed statement is parsed and planned on every execution.
 */
export function prepareStatementsOn(pglite: PGlite): void {
  const query = pglite.query.bind(pglite);
  /** Name -> the parameter types of a statement parsed in this database. */
  const parsed = new Map<string, number[]>();
  const send = async (messages: Uint8Array[]) => {
    const { messages: answer } = await pglite.execProtocol(concat([...messages, protocol.serialize.sync()]), {
      throwOnError: false,
    });
    const error = answer.find((message) => message instanceof protocol.messages.DatabaseError);
    if (error) throw error;
    return answer;
  };
  // Closed first: a statement whose result type changed is prepared again under its name (closing none is no error).
  const prepare = async (name: string, text: string) => {
    const answer = await send([
      protocol.serialize.close({ type: 'S', name }),
      protocol.serialize.parse({ name, text }),
      protocol.serialize.describe({ type: 'S', name }),
    ]);
    const description = answer.find((message) => message instanceof protocol.messages.ParameterDescriptionMessage);
    const types = description?.dataTypeIDs ?? [];
    parsed.set(name, types);
    return types;
  };
  const execute = async (name: string, text: string, params: readonly unknown[]) => {
    const types = parsed.get(name) ?? (await prepare(name, text));
    const values = params.map((value, i) => {
      if (value == null) return null;
      const serialize = pglite.serializers[types[i]!] as Serializer | undefined;
      return serialize ? serialize(value) : String(value);
    });
    const answer = await send([
      protocol.serialize.bind({ statement: name, values }),
      protocol.serialize.describe({ type: 'P' }),
      protocol.serialize.execute({}),
    ]);
    return pgliteResults.parseResults(answer, pglite.parsers, { rowMode: 'object' })[0]!;
  };
  /** Whether `error` says the statement's result type changed; then it is prepared again at its next use. */
  const forgetChanged = (name: string, error: unknown) => {
    if ((error as Error).message !== RESULT_TYPE_CHANGED) return false;
    parsed.delete(name);
    return true;
  };
  const nameOf = (text: string, options: QueryOptions) => {
    const plain = options === undefined || (Object.keys(options).length === 1 && options.rowMode === 'object');
    return plain ? names.get(text) : undefined;
  };
  pglite.query = (async (text: string, params?: unknown[], options?: QueryOptions) => {
    const name = nameOf(text, options);
    if (name === undefined) return query(text, params, options);
    await pglite.waitReady;
    // After any open transaction, as PGlite's own query waits for it.
    return pglite._runExclusiveTransaction(() =>
      pglite.runExclusive(async () => {
        let results: Results;
        try {
          results = await execute(name, text, params ?? []);
        } catch (error) {
          if (!forgetChanged(name, error)) throw error;
          results = await execute(name, text, params ?? []);
        }
        await pglite.syncToFs();
        return results;
      }),
    );
  }) as PGlite['query'];
  // A statement that fails inside a transaction aborts it, so one whose result type changed is not run again there:
  // the error fails the transaction, and the statement is prepared again at its next use.
  const transaction = pglite.transaction.bind(pglite);
  pglite.transaction = ((callback: (tx: Transaction) => Promise<unknown>) =>
    transaction((tx) => {
      const txQuery = tx.query.bind(tx);
      const named = Object.create(tx, {
        query: {
          value: (async (text: string, params?: unknown[], options?: QueryOptions) => {
            const name = nameOf(text, options);
            if (name === undefined || tx.closed) return txQuery(text, params, options);
            return pglite.runExclusive(() =>
              execute(name, text, params ?? []).catch((error: unknown) => {
                forgetChanged(name, error);
                throw error;
              }),
            );
          }) as Transaction['query'],
        },
      }) as Transaction;
      return callback(named);
    })) as PGlite['transaction'];
}

function concat(parts: Uint8Array[]): Uint8Array {
  const joined = new Uint8Array(parts.reduce((length, part) => length + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    joined.set(part, offset);
    offset += part.length;
  }
  return joined;
}
