// One factory for both engines: PostgreSQL through pg when a URL is given, embedded PGlite otherwise.
// Both are set up to return the same JS types, so queries never care which one they run on.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import { lockDataDir } from './data-dir-lock.ts';
import { errorMessage } from './errors.ts';
import { NOTIFY_AFTER_COMMIT_OPTIONS, sendNotificationsAfterCommit } from './notifications-after-commit.ts';
import { DEFAULT_DATABASE_TIMEOUTS, type DatabaseTimeouts } from './database-timeouts.ts';
import { PGliteDialect } from './pglite-dialect.ts';
import { PGLITE_CONF } from './pglite-options.ts';
import { OwnerOnlyNodeFS } from './pglite-owner-only-fs.ts';
import { createDataDir, tightenTemplateCache } from './pglite-template.ts';
import { tightenModes } from './private-files.ts';
import {
  prepareStatementsOn,
  PreparingClient,
  runNamedOnPool,
  runsNamedStatements,
  type RunNamed,
} from './prepared-statements.ts';
import { parseTimestamp } from './timestamps.ts';
import type { Database } from './schema.ts';

const INT8 = 20;
const DATE = 1082;
const TIMESTAMPTZ = 1184;

/**
 * int8 (count(*), sums) as JS numbers, DATE as the plain 'YYYY-MM-DD' string and timestamptz as Dates that keep their
 * ISO form (db/timestamps.ts, pg's parser for other forms), on both engines (PGlite's own reads the years 0001–0099 as
 * 1901–1999 or 2000–2049).
 */
const parsers = {
  [INT8]: (value: string) => Number(value),
  [DATE]: (value: string) => value,
  [TIMESTAMPTZ]: parseTimestamp,
};

export type Db = Kysely<Database>;

export type DbTarget = PostgresTarget | { dataDir: string } | { pglite: PGlite };

/**
 * PostgreSQL, reached directly or through a connection pooler in transaction mode (PgBouncer's `pool_mode =
 * transaction`), which hands each transaction whichever server connection is free: there, nothing may rely on a
 * connection's session (startup parameters the pooler does not pass, SET, LISTEN, session advisory locks), and
 * named prepared statements need a pooler that tracks them (PgBouncer >= 1.21 with `max_prepared_statements`).
 */
export interface PostgresTarget {
  databaseUrl: string;
  /**
   * A connection that keeps its session, for LISTEN (db/notifications.ts) and the start-up's advisory lock
   * (db/startup-lock.ts): the database itself (a session-mode pooler in between must accept the statement_timeout
   * startup parameter: PgBouncer's ignore_startup_parameters). DATABASE_URL when absent.
   */
  sessionUrl?: string;
  /** `databaseUrl` is a transaction-mode pooler: statement_timeout is not sent at connect (see connect()). */
  transactionPooler?: boolean;
  /** Named prepared statements for the hot queries (db/prepared-statements.ts); on unless false. */
  preparedStatements?: boolean;
}

/** Where session state lives: LISTEN and session advisory locks go there, never through a transaction pooler. */
export function sessionUrlOf(target: PostgresTarget): string {
  return target.sessionUrl ?? target.databaseUrl;
}

/** What the client waits beyond statement_timeout for the server's own cancellation before it gives up itself. */
const QUERY_TIMEOUT_MARGIN_MS = 2_000;

export interface ConnectOptions {
  timeouts?: DatabaseTimeouts;
  /**
   * A pooled connection failed, idle or checked out (server restart, failover, pg_terminate_backend); the pool
   * drops it and opens a new one on demand. Gets the SQLSTATE and message only: pg hangs the whole client,
   * connection parameters included, on the error it emits.
   */
  onConnectionError?: (error: ConnectionErrorSummary) => void;
  /** Given the pg pool (PostgreSQL only), for metrics. */
  observePool?: (pool: pg.Pool) => void;
  /**
   * A long-running process's: the triggers' and notifyAfterCommit's messages are sent by this process after each
   * commit, not by the commit (db/notifications-after-commit.ts); a failed send is reported here. On PostgreSQL
   * reached directly only: a transaction pooler passes no start-up setting, and the embedded database has one writer.
   * Not for a command that exits after its writes: it could exit before their messages are sent.
   */
  notifyAfterCommit?: { onError: (error: Error) => void; coalesceMs?: number };
  /**
   * The embedded database's directory and the cached templates had `entries` files and directories that other users
   * could reach (an install from before they were made owner-only, a copy, a chmod): they are owner-only now.
   */
  onModesTightened?: (entries: number) => void;
}

export interface ConnectionErrorSummary {
  code: string | undefined;
  message: string;
}

/** Connections each process's pool opens to PostgreSQL at most; shares of it (services/webhooks/worker.ts) read it here. */
export const POOL_CONNECTIONS = 10;

export function connect(target: DbTarget, options: ConnectOptions = {}): Db {
  if ('databaseUrl' in target) {
    const timeouts = options.timeouts ?? DEFAULT_DATABASE_TIMEOUTS;
    const afterCommit = options.notifyAfterCommit && !target.transactionPooler ? options.notifyAfterCommit : undefined;
    const pool = new pg.Pool({
      Client: target.preparedStatements === false ? pg.Client : PreparingClient,
      connectionString: target.databaseUrl,
      max: POOL_CONNECTIONS,
      connectionTimeoutMillis: timeouts.connectMs,
      // A startup parameter, which PgBouncer refuses ("unsupported startup parameter"); a SET would stay on a server
      // connection that the pooler then hands to other clients. Behind a transaction pooler the server's own setting
      // bounds statements (the role's, or the pooler's connect_query), which the start checks (statementTimeoutMs).
      ...(target.transactionPooler ? {} : { statement_timeout: timeouts.statementMs }),
      ...(afterCommit ? { options: NOTIFY_AFTER_COMMIT_OPTIONS } : {}),
      query_timeout: timeouts.statementMs + QUERY_TIMEOUT_MARGIN_MS,
      types: {
        getTypeParser: (oid: number, format?: any) =>
          parsers[oid as keyof typeof parsers] ?? pg.types.getTypeParser(oid, format),
      },
    });
    const report = (error: Error) => options.onConnectionError?.(summarize(error));
    // pg emits 'error' on a client whose server went away; without a listener that event ends the process. The pool
    // listens only while a client is idle, so every client gets a listener of its own for the time it is checked
    // out (the query in flight fails by itself, and the pool discards the client when it comes back).
    pool.on('error', report);
    pool.on('connect', (client) => client.on('error', report));
    options.observePool?.(pool);
    if (afterCommit) sendNotificationsAfterCommit(pool, afterCommit.onError, afterCommit.coalesceMs);
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    if (target.preparedStatements !== false) runsNamedStatements(db, runNamedOnPool(pool, report));
    return db;
  }
  const pglite = 'pglite' in target ? target.pglite : openPglite(target.dataDir, options.onModesTightened);
  let runNamed = preparing.get(pglite);
  if (!runNamed) preparing.set(pglite, (runNamed = prepareStatementsOn(pglite)));
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) });
  runsNamedStatements(db, runNamed);
  embedded.set(db, pglite);
  return db;
}

/** The PGlite behind each embedded Db, for what Kysely does not reach (LISTEN, db/notifications.ts). */
const embedded = new WeakMap<Db, PGlite>();

/** The PGlite instances whose query runs prepared statements already (a test may connect twice to one). */
const preparing = new WeakMap<PGlite, RunNamed>();

export function embeddedDatabaseOf(db: Db): PGlite | undefined {
  return embedded.get(db);
}

/** For every PGlite of the project, the template's builder (pglite-initdb.ts) included. */
export const PGLITE_OPTIONS = { parsers, postgresqlconf: PGLITE_CONF };

/**
 * An embedded database in a directory (locked to this process), or in memory for 'memory://'. The directory and the
 * cached templates are made owner-only at every open (db/private-files.ts), whatever left them open to others.
 */
export function openPglite(dataDir: string, onModesTightened?: (entries: number) => void): PGlite {
  if (dataDir.startsWith('memory://')) return new PGlite(dataDir, PGLITE_OPTIONS);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const release = lockDataDir(dataDir);
  try {
    if (!existsSync(join(dataDir, 'PG_VERSION'))) createDataDir(dataDir);
    const tightened = tightenModes(dataDir) + tightenTemplateCache();
    if (tightened > 0) onModesTightened?.(tightened);
  } catch (error) {
    release();
    throw error;
  }
  const pglite = new PGlite({ ...PGLITE_OPTIONS, fs: new OwnerOnlyNodeFS(dataDir) });
  // Kysely's destroy() ends in pglite.close(); the lock must end with it, not only when the process exits.
  const close = pglite.close.bind(pglite);
  pglite.close = async () => {
    try {
      await close();
    } finally {
      release();
    }
  };
  return pglite;
}

function summarize(error: Error): ConnectionErrorSummary {
  const code = (error as { code?: unknown }).code;
  return { code: typeof code === 'string' ? code : undefined, message: error.message };
}

/**
 * Start-up check (server and CLI): one trivial query within the connection timeout, or an Error whose message is
 * one line naming the database and the reason (unreachable, refused, no such database, bad credentials). Without
 * it an unreachable server surfaces as a failed migration, which sends operators astray.
 */
export async function assertDatabaseReachable(
  db: Db,
  target: DbTarget,
  timeoutMs = DEFAULT_DATABASE_TIMEOUTS.connectMs,
): Promise<void> {
  // The embedded database has nothing to reach: its first query waits for it to open, however long that takes.
  const bounded = 'databaseUrl' in target;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    if (bounded) timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  const started = Date.now();
  try {
    await Promise.race([sql`select 1`.execute(db), timeout]);
  } catch (error) {
    // pg reports its own connect timeout as a terminated connection; say what happened instead.
    const reason =
      bounded && Date.now() - started >= timeoutMs ? `no answer within ${timeoutMs} ms` : errorMessage(error);
    throw new Error(`cannot reach ${describeTarget(target)}: ${reason}`, { cause: error }); // the cause's SQLSTATE names the remedy (startup-errors.ts)
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The statement_timeout (ms, 0 for none) that statements sent through the pool run under. Behind a transaction pooler
 * it is the server's (the role's or database's setting, or the pooler's connect_query), not
 * DATABASE_STATEMENT_TIMEOUT_MS.
 */
export async function statementTimeoutMs(db: Db): Promise<number> {
  const { rows } = await sql<{
    ms: number;
  }>`select setting::int as ms from pg_settings where name = 'statement_timeout'`.execute(db);
  return rows[0]!.ms;
}

/** Describes where the data lives without printing credentials. */
export function describeTarget(target: DbTarget): string {
  if ('databaseUrl' in target) {
    const url = new URL(target.databaseUrl);
    return `PostgreSQL at ${url.host}${url.pathname}`;
  }
  return 'pglite' in target ? 'embedded PGlite (in memory)' : `embedded PGlite in ${target.dataDir}`;
}

/**
 * The environment that points `npm run cli` at the same database, for hints printed to operators, e.g.
 * `DATABASE_URL=postgres://app@db:5432/app `; a password is not printed but named, so the hint stays safe to log.
 */
export function cliEnvironmentFor(target: DbTarget): string {
  if ('databaseUrl' in target) {
    const url = new URL(target.databaseUrl);
    if (url.password) url.password = 'PASSWORD';
    return `DATABASE_URL=${url.toString()} `;
  }
  return 'dataDir' in target && target.dataDir !== '.data' ? `DATA_DIR=${target.dataDir} ` : '';
}
