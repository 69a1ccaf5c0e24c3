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
//
// A named statement is planned for its values at each of its first five runs; PostgreSQL then keeps one generic plan
// for it only while that plan's estimated cost is below the average of those custom plans. Where planner statistics
// show one student owning many times another's rows (a large account among few students), the generic plan's
// estimate is an average student's, above a small student's custom plan, and every run is planned again: for the daily
// loop's statement (some 25 relations) that planning cost more than running it, on both engines. A statement marked
// `plan: 'generic'` always runs its generic plan: plan_cache_mode is set for its run alone, in the same exchange.
import { parse as pgliteResults, protocol, type PGlite, type Results, type Transaction } from '@electric-sql/pglite';
import type { Compilable, CompiledQuery, Kysely, RawBuilder } from 'kysely';
import pg from 'pg';

/** Far above the shapes of the opted-in queries (the task list has 32, one per combination of filters). */
const MAX_NAMED_STATEMENTS = 500;

/** Statement text -> name, shared by every connection of the process (each connection parses a name once). */
const names = new Map<string, string>();

/** The names of the statements that run their generic plan whatever the statistics say (PreparedOptions.plan). */
const genericPlans = new Set<string>();

export interface PreparedOptions {
  /**
   * 'generic': the statement always runs the plan made once without its values, never one made for each run's values.
   * For a statement whose every read goes through an index of the student's rows, whatever the student: a plan made
   * for the values would pick the same indexes, and making it costs more than running it.
   */
  plan?: 'generic';
}

/** Run before and after a statement with PreparedOptions.plan 'generic', in its exchange: a SET is undone by a rollback. */
const GENERIC_PLAN = {
  on: { name: 'generic_plan_on', text: 'set plan_cache_mode = force_generic_plan' },
  off: { name: 'generic_plan_off', text: 'reset plan_cache_mode' },
};

/** SQLSTATE 0A000 with this message: a table's columns changed type under a prepared statement (a migration). */
const RESULT_TYPE_CHANGED = 'cached plan must not change result type';

/** Runs `query` (a query builder's, or a raw `sql` template's) as a named prepared statement and returns its rows. */
export async function executePrepared<R>(
  db: Pick<Kysely<any>, 'executeQuery' | 'getExecutor'>,
  query: Compilable<R> | RawBuilder<R> | CompiledQuery<R>,
  options: PreparedOptions = {},
): Promise<R[]> {
  const compiled = 'isRawBuilder' in query ? query.compile(db) : 'compile' in query ? query.compile() : query;
  if (!names.has(compiled.sql) && names.size < MAX_NAMED_STATEMENTS) {
    const name = `prepared_${names.size + 1}`;
    names.set(compiled.sql, name);
    if (options.plan === 'generic') genericPlans.add(name);
  }
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
  options: PreparedOptions = {},
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
    return executePrepared(db, { ...template, parameters }, options);
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
      return await this.run(name, text, values);
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
      return await this.run(name, text, values);
    }
  }

  private run(name: string, text: string, values: unknown[] | undefined): Promise<pg.QueryResult> {
    if (!genericPlans.has(name)) return super.query({ name, text, values });
    return new Promise((resolve, reject) => {
      const query = new GenericPlanQuery({ name, text, values }, (error, results) => {
        if (error) reject(error);
        // The SET's result, the statement's, the RESET's.
        else resolve((results as unknown as pg.QueryResult[])[1]!);
      });
      super.query(query);
    });
  }

  private async forget(name: string) {
    await super.query(`deallocate ${name}`);
    delete (this as unknown as { connection: { parsedStatements: Record<string, string> } }).connection
      .parsedStatements[name];
  }
}

/** pg's Query as it sends an extended-protocol query (its own methods, not in its types). */
interface ExtendedQuery {
  prepare(connection: PgConnection): void;
  _getRows(connection: PgConnection, rows: number | undefined): void;
}

interface PgConnection {
  parse(message: { text: string; name?: string }): void;
  bind(message: { values?: unknown[] }): void;
  execute(message: { rows?: number }): void;
  sync(): void;
}

/**
 * A named statement run by pg under plan_cache_mode = force_generic_plan, in one exchange (one Sync, so one implicit
 * transaction, or the caller's): the SET, the statement, the RESET (those two unnamed). Its results are the three's.
 */
class GenericPlanQuery extends pg.Query {
  constructor(config: pg.QueryConfig, callback: (error: Error | undefined, results: pg.ResultBuilder) => void) {
    super(config, callback);
    const query = this as unknown as ExtendedQuery;
    const prepare = query.prepare.bind(this);
    query.prepare = (connection) => {
      unnamed(connection, GENERIC_PLAN.on.text);
      prepare(connection);
    };
    // pg's sends the statement's Execute and then the Sync: the RESET goes between them. Kysely reads every statement
    // whole (no `rows`, which would page it through here).
    query._getRows = (connection) => {
      connection.execute({});
      unnamed(connection, GENERIC_PLAN.off.text);
      connection.sync();
    };
  }
}

function unnamed(connection: PgConnection, text: string) {
  connection.parse({ text });
  connection.bind({});
  connection.execute({});
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
  /** Bind and Execute of a named statement without parameters. */
  const run = async ({ name, text }: { name: string; text: string }) => {
    if (!parsed.has(name)) await prepare(name, text);
    return [protocol.serialize.bind({ statement: name }), protocol.serialize.execute({})];
  };
  const execute = async (name: string, text: string, params: readonly unknown[]) => {
    const types = parsed.get(name) ?? (await prepare(name, text));
    const values = params.map((value, i) => {
      if (value == null) return null;
      const serialize = pglite.serializers[types[i]!] as Serializer | undefined;
      return serialize ? serialize(value) : String(value);
    });
    const statement = [
      protocol.serialize.bind({ statement: name, values }),
      protocol.serialize.describe({ type: 'P' }),
      protocol.serialize.execute({}),
    ];
    if (!genericPlans.has(name)) {
      const answer = await send(statement);
      return pgliteResults.parseResults(answer, pglite.parsers, { rowMode: 'object' })[0]!;
    }
    // One exchange, so one implicit transaction (or the caller's): a failure undoes the SET with the rest.
    const answer = await send([...(await run(GENERIC_PLAN.on)), ...statement, ...(await run(GENERIC_PLAN.off))]);
    // The SET's result, the statement's, the RESET's.
    return pgliteResults.parseResults(answer, pglite.parsers, { rowMode: 'object' })[1]!;
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
