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
import { protocol, type PGlite, type Results, type Transaction } from '@electric-sql/pglite';
import type { Compilable, CompiledQuery, Kysely, RawBuilder } from 'kysely';
import pg from 'pg';
// pg's own conversion of a value to its text form, as its Query binds them (exported by pg's package as ./lib/*).
import { prepareValue } from 'pg/lib/utils.js';
import { bindExecuteSync, exchange, handOnNotifications, type Field } from './pglite-answers.ts';

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

/**
 * Runs a named statement outside any transaction for one Db (connect()'s own Kysely, never a transaction's or a
 * connection's): on PostgreSQL a pool's client checked out for the statement alone, on PGlite under its locks, without
 * Kysely's connection provider, driver and result around it. Those are several promises and a second checkout path
 * around every hot read; a transaction's statements still go through Kysely, on the transaction's connection.
 */
export type RunNamed = (name: string, text: string, values: readonly unknown[]) => Promise<unknown[]>;

/** connect()'s Kysely -> its RunNamed (runsNamedStatements). */
const direct = new WeakMap<object, RunNamed>();

/** Lets executePrepared run `db`'s named statements by `run` (db is connect()'s own Kysely, outside transactions). */
export function runsNamedStatements(db: object, run: RunNamed): void {
  direct.set(db, run);
}

/** Runs `query` (a query builder's, or a raw `sql` template's) as a named prepared statement and returns its rows. */
export async function executePrepared<R>(
  db: Pick<Kysely<any>, 'executeQuery' | 'getExecutor'>,
  query: Compilable<R> | RawBuilder<R> | CompiledQuery<R>,
  options: PreparedOptions = {},
): Promise<R[]> {
  const compiled = 'isRawBuilder' in query ? query.compile(db) : 'compile' in query ? query.compile() : query;
  return runPrepared(db, compiled, options);
}

function runPrepared<R>(
  db: Pick<Kysely<any>, 'executeQuery'>,
  compiled: CompiledQuery<R>,
  options: PreparedOptions,
): Promise<R[]> {
  let name = names.get(compiled.sql);
  if (name === undefined && names.size < MAX_NAMED_STATEMENTS) {
    name = `prepared_${names.size + 1}`;
    names.set(compiled.sql, name);
    if (options.plan === 'generic') genericPlans.add(name);
  }
  const run = name === undefined ? undefined : direct.get(db);
  if (run) return run(name!, compiled.sql, compiled.parameters) as Promise<R[]>;
  return db.executeQuery(compiled).then((result) => result.rows);
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
    return runPrepared(db, { ...template, parameters }, options);
  };
}

type Done = (error: Error | null | undefined, result?: pg.QueryResult) => void;

/** pg's client, sending the statements executePrepared named by their name. */
export class PreparingClient extends pg.Client {
  /** Statements whose result type changed inside a transaction, which the error aborted: prepared again at their next use. */
  private readonly stale = new Set<string>();
  /** Name -> the columns this connection's statement answers with, as described at its first run (DescribedQuery). */
  private readonly described = new Map<string, Description>();

  // pg's overloads (callback, submittable, config object) pass through untouched; Kysely calls (text, values).
  override query(...args: unknown[]): never {
    const [text, values, callback] = args;
    const name = typeof text === 'string' && callback === undefined ? names.get(text) : undefined;
    if (name === undefined) return (super.query as (...a: unknown[]) => never)(...args);
    return new Promise<pg.QueryResult>((resolve, reject) =>
      this.runNamed(name, text as string, (values as unknown[] | undefined) ?? [], (error, result) =>
        error ? reject(error) : resolve(result!),
      ),
    ) as never;
  }

  /** Runs the statement `name` (of `text`) with `values`; `done` gets its result or its error. */
  runNamed(name: string, text: string, values: readonly unknown[], done: Done): void {
    if (this.stale.has(name)) {
      this.runStale(name, text, values).then((result) => done(undefined, result), done);
      return;
    }
    this.send(name, text, values, (error, result) => {
      if (error?.message !== RESULT_TYPE_CHANGED) return done(error, result);
      this.prepareAgain(name, text, values, error).then((again) => done(undefined, again), done);
    });
  }

  private async runStale(name: string, text: string, values: readonly unknown[]) {
    this.stale.delete(name);
    await this.forget(name);
    try {
      return await this.sent(name, text, values);
    } catch (error) {
      if ((error as Error).message !== RESULT_TYPE_CHANGED) throw error;
      return this.prepareAgain(name, text, values, error as Error);
    }
  }

  // The statement stays broken on this connection until it is prepared again: drop it and run the query once more,
  // parsed anew. Inside a transaction (aborted by the error) the DEALLOCATE fails: the request fails with the error, and
  // the statement is dropped at its next use.
  private async prepareAgain(name: string, text: string, values: readonly unknown[], error: Error) {
    try {
      await this.forget(name);
    } catch {
      this.stale.add(name);
      throw error;
    }
    return this.sent(name, text, values);
  }

  private sent(name: string, text: string, values: readonly unknown[]) {
    return new Promise<pg.QueryResult>((resolve, reject) =>
      this.send(name, text, values, (error, result) => (error ? reject(error) : resolve(result!))),
    );
  }

  private send(name: string, text: string, values: readonly unknown[], done: Done): void {
    if (!genericPlans.has(name)) {
      super.query(new DescribedQuery(name, text, values as unknown[], this.described, done));
      return;
    }
    const config = { name, text, values: values as unknown[] };
    super.query(
      // The SET's result, the statement's, the RESET's.
      new GenericPlanQuery(config, (error, results) =>
        done(error, error ? undefined : (results as unknown as pg.QueryResult[])[1]),
      ),
    );
  }

  private async forget(name: string) {
    this.described.delete(name);
    await super.query(`deallocate ${name}`);
    delete (this as unknown as { connection: { parsedStatements: Record<string, string> } }).connection
      .parsedStatements[name];
  }
}

/**
 * The RunNamed of connect()'s Kysely on PostgreSQL: a client of `pool` checked out for the statement, as Kysely's
 * driver would check it out, and given back as it would (an error of the statement does not end the connection, but
 * one that ends the backend does).
 */
export function runNamedOnPool(pool: pg.Pool, onConnectionEnded?: (error: Error) => void): RunNamed {
  return (name, text, values) =>
    new Promise((resolve, reject) => {
      pool.connect((error, client, release) => {
        if (error || !client) return reject(error);
        (client as unknown as PreparingClient).runNamed(name, text, values, (queryError, result) => {
          // A FATAL error (the backend ended the connection) comes before the socket's end: given back as it is, the
          // connection would be lent again and fail the next statement too. Given back with the error, the pool drops
          // it (and its end is no error event of the client's, so it is reported here).
          if ((queryError as { severity?: string } | null | undefined)?.severity === 'FATAL') {
            release(queryError!);
            onConnectionEnded?.(queryError!);
          } else release();
          if (queryError) reject(queryError);
          else resolve(result!.rows);
        });
      });
    });
}

/** pg's Query as it sends an extended-protocol query (its own methods, not in its types). */
interface ExtendedQuery {
  prepare(connection: PgConnection): void;
  _getRows(connection: PgConnection, rows: number | undefined): void;
}

/** What pg's Query keeps and does besides (not in its types either). */
interface PgQuery extends ExtendedQuery {
  text: string;
  name: string;
  values: unknown[];
  types: unknown;
  portal: string;
  binary: boolean;
  rows: number | undefined;
  _accumulateRows: unknown;
  _result: { fields: unknown[]; _parsers: unknown[]; _prebuiltEmptyResultObject: object | null };
  hasBeenParsed(connection: PgConnection): boolean;
  handleRowDescription(message: unknown): void;
  handleError(error: unknown, connection: PgConnection): void;
}

const pgQuery = pg.Query.prototype as unknown as PgQuery;

interface PgConnection {
  parse(message: { text: string; name?: string; types?: unknown }): void;
  bind(message: {
    portal?: string;
    statement?: string;
    values?: unknown[];
    binary?: boolean;
    valueMapper?: unknown;
  }): void;
  execute(message: { rows?: number }): void;
  close(message: { type: 'S'; name: string }): void;
  sync(): void;
  submittedNamedStatements: Record<string, string>;
}

/** A statement's columns as pg's Result sets them up from a RowDescription: the fields, their parsers, a row's keys. */
interface Description {
  fields: unknown[];
  parsers: unknown[];
  empty: object | null;
}

/**
 * A named statement's run on a connection that has described its columns before: pg sends a Describe of the portal
 * with every run and sets up its result from the answer (a parser looked up per column, a row's keys), which cost
 * about as much of the web process as parsing the page's rows. The description of the statement's first run on the
 * connection is kept (the columns cannot change under a prepared statement: PostgreSQL refuses to run it with
 * RESULT_TYPE_CHANGED, and it is prepared again, described again); later runs send no Describe and read their rows
 * with it. The text is passed as pg's plain query text, and the name set after: pg copies a config object by its
 * property descriptors on every query.
 */
class DescribedQuery extends pg.Query {
  readonly #described: Map<string, Description>;
  readonly #description: Description | undefined;

  constructor(name: string, text: string, values: unknown[], described: Map<string, Description>, done: Done) {
    super(text, values, done as never);
    const query = this as unknown as PgQuery;
    query.name = name;
    this.#described = described;
    this.#description = described.get(name);
    if (this.#description) {
      const result = query._result;
      result.fields = this.#description.fields;
      result._parsers = this.#description.parsers;
      result._prebuiltEmptyResultObject = this.#description.empty;
      // What pg's handleRowDescription decides: the rows go to the result (there is a callback).
      query._accumulateRows = true;
    }
  }

  handleRowDescription(message: unknown): void {
    const query = this as unknown as PgQuery;
    pgQuery.handleRowDescription.call(this, message);
    const result = query._result;
    this.#described.set(query.name, {
      fields: result.fields,
      parsers: result._parsers,
      empty: result._prebuiltEmptyResultObject,
    });
  }

  /** pg's prepare (Query.prototype.prepare), without its Describe once the statement's columns are known. */
  prepare(connection: PgConnection): void {
    if (!this.#description) return pgQuery.prepare.call(this, connection);
    const query = this as unknown as PgQuery;
    if (!query.hasBeenParsed(connection)) {
      connection.parse({ text: query.text, name: query.name, types: query.types });
      connection.submittedNamedStatements[query.name] = query.text;
    }
    try {
      connection.bind({
        portal: query.portal,
        statement: query.name,
        values: query.values,
        binary: query.binary,
        valueMapper: prepareValue,
      });
    } catch (error) {
      connection.close({ type: 'S', name: query.name });
      connection.sync();
      query.handleError(error, connection);
      return;
    }
    query._getRows(connection, query.rows);
  }
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
 * parsed once (with their parameter types, which pick each value's serializer as PGlite's own query does, and their
 * columns), then bound and executed in one exchange, whose answer is read from its bytes (db/pglite-answers.ts; the
 * columns are those described when the statement was parsed, so no Describe of the portal is sent). Inside a
 * transaction the statement runs as the transaction's own query would (under the query lock only, no write to the
 * file system before the commit), since the writes of a request run there and an unnamed statement is parsed and
 * planned on every execution. Returns the RunNamed of the PGlite's Kysely (runsNamedStatements).
 */
export function prepareStatementsOn(pglite: PGlite): RunNamed {
  const query = pglite.query.bind(pglite);
  const dispatch = handOnNotifications(pglite);
  /** Name -> a statement parsed in this database: its parameters' types and its columns. */
  const parsed = new Map<string, { types: number[]; fields: Field[] }>();
  /** `messages` and a Sync, or `whole` (messages ending in a Sync). */
  const send = async (messages: Uint8Array[], described?: Field[], whole?: Uint8Array) => {
    const answer = await exchange(pglite, whole ?? concat([...messages, SYNC]), described, dispatch);
    if (answer.error) throw answer.error;
    return answer;
  };
  // Closed first: a statement whose result type changed is prepared again under its name (closing none is no error).
  const prepare = async (name: string, text: string) => {
    const answer = await send([
      protocol.serialize.close({ type: 'S', name }),
      protocol.serialize.parse({ name, text }),
      protocol.serialize.describe({ type: 'S', name }),
    ]);
    const statement = { types: answer.parameterTypes ?? [], fields: answer.fields ?? [] };
    parsed.set(name, statement);
    return statement;
  };
  /** Bind and Execute of a named statement without parameters. */
  const run = async ({ name, text }: { name: string; text: string }) => {
    if (!parsed.has(name)) await prepare(name, text);
    return [protocol.serialize.bind({ statement: name }), protocol.serialize.execute({})];
  };
  const execute = async (name: string, text: string, params: readonly unknown[]): Promise<Results> => {
    const { types, fields } = parsed.get(name) ?? (await prepare(name, text));
    const values = params.map((value, i) => {
      if (value == null) return null;
      const serialize = pglite.serializers[types[i]!] as Serializer | undefined;
      return serialize ? serialize(value) : String(value);
    });
    if (!genericPlans.has(name)) return (await send([], fields, bindExecuteSync(name, values))).results[0]!;
    const statement = [protocol.serialize.bind({ statement: name, values }), protocol.serialize.execute({})];
    // One exchange, so one implicit transaction (or the caller's): a failure undoes the SET with the rest.
    const answer = await send(
      [...(await run(GENERIC_PLAN.on)), ...statement, ...(await run(GENERIC_PLAN.off))],
      fields,
    );
    // The SET's result, the statement's, the RESET's.
    return answer.results[1]!;
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
  /** A named statement outside a transaction: after any open transaction, as PGlite's own query waits for it. */
  const runAlone = async (name: string, text: string, params: readonly unknown[]) => {
    await pglite.waitReady;
    return pglite._runExclusiveTransaction(() =>
      pglite.runExclusive(async () => {
        let results: Results;
        try {
          results = await execute(name, text, params);
        } catch (error) {
          if (!forgetChanged(name, error)) throw error;
          results = await execute(name, text, params);
        }
        await pglite.syncToFs();
        return results;
      }),
    );
  };
  pglite.query = (async (text: string, params?: unknown[], options?: QueryOptions) => {
    const name = nameOf(text, options);
    return name === undefined ? query(text, params, options) : runAlone(name, text, params ?? []);
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
  return async (name, text, values) => (await runAlone(name, text, values)).rows;
}

const SYNC = protocol.serialize.sync();

function concat(parts: Uint8Array[]): Uint8Array {
  const joined = new Uint8Array(parts.reduce((length, part) => length + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    joined.set(part, offset);
    offset += part.length;
  }
  return joined;
}
