// One factory for both engines: PostgreSQL through pg when a URL is given, embedded PGlite otherwise.
// Both are set up to return the same JS types, so queries never care which one they run on.
import { mkdirSync } from 'node:fs';
import { Kysely, PGliteDialect, PostgresDialect } from 'kysely';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import { lockDataDir } from './data-dir-lock.ts';
import type { Database } from './schema.ts';

const INT8 = 20;
const DATE = 1082;

/** int8 (count(*), sums) as JS numbers and DATE as the plain 'YYYY-MM-DD' string, on both engines. */
const parsers = {
  [INT8]: (value: string) => Number(value),
  [DATE]: (value: string) => value,
};

export type Db = Kysely<Database>;

export type DbTarget = { databaseUrl: string } | { dataDir: string } | { pglite: PGlite };

export interface ConnectOptions {
  /** An idle pooled connection failed (server restart, failover, a dropped database); the pool replaces it. */
  onIdleConnectionError?: (error: Error) => void;
  /** Given the pg pool (PostgreSQL only), for metrics. */
  observePool?: (pool: pg.Pool) => void;
}

export function connect(target: DbTarget, options: ConnectOptions = {}): Db {
  if ('databaseUrl' in target) {
    const pool = new pg.Pool({
      connectionString: target.databaseUrl,
      max: 10,
      types: { getTypeParser: (oid: number, format?: any) => parsers[oid as keyof typeof parsers] ?? pg.types.getTypeParser(oid, format) },
    });
    // Without a listener, pg's 'error' event on an idle connection would crash the whole process.
    pool.on('error', options.onIdleConnectionError ?? (() => {}));
    options.observePool?.(pool);
    return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  }
  const pglite = 'pglite' in target ? target.pglite : openPglite(target.dataDir);
  return new Kysely<Database>({ dialect: new PGliteDialect({ pglite }) });
}

/** An embedded database in a directory (locked to this process), or in memory for 'memory://'. */
export function openPglite(dataDir: string): PGlite {
  if (dataDir.startsWith('memory://')) return new PGlite(dataDir, { parsers });
  mkdirSync(dataDir, { recursive: true });
  const release = lockDataDir(dataDir);
  const pglite = new PGlite(dataDir, { parsers });
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
