// Kysely on embedded PGlite. kysely 0.29 ships this dialect but declares Node >= 22; 0.28 (Node >= 20) has none, and
// the published ones do not fit: kysely-pglite-dialect's peer range stops at pglite 0.4, kysely-pglite brings a CLI
// (oclif, kysely-codegen) and sends BEGIN on a connection that concurrent requests share. This follows kysely 0.29's
// own (MIT): one connection, lent to one Kysely caller at a time, and a Kysely transaction runs as PGlite's exclusive
// transaction, so a query sent to the PGlite itself (LISTEN, the job queue) waits for it instead of landing inside it.
import { Mutex, type PGlite, type Transaction } from '@electric-sql/pglite';
import {
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
} from 'kysely';

export class PGliteDialect implements Dialect {
  constructor(private readonly pglite: PGlite) {}
  createAdapter() {
    return new PostgresAdapter();
  }
  createDriver(): Driver {
    return new PGliteDriver(this.pglite);
  }
  createIntrospector(db: Kysely<any>) {
    return new PostgresIntrospector(db);
  }
  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }
}

class PGliteDriver implements Driver {
  private readonly connection: PGliteConnection;
  private readonly lending = new Mutex();
  private release: (() => void) | undefined;

  constructor(private readonly pglite: PGlite) {
    this.connection = new PGliteConnection(pglite);
  }

  async init() {
    await this.pglite.waitReady;
  }

  async acquireConnection() {
    this.release = await this.lending.acquire();
    return this.connection;
  }

  async releaseConnection() {
    this.release?.();
  }

  beginTransaction(connection: DatabaseConnection) {
    return (connection as PGliteConnection).begin();
  }

  commitTransaction(connection: DatabaseConnection) {
    return (connection as PGliteConnection).end(true);
  }

  rollbackTransaction(connection: DatabaseConnection) {
    return (connection as PGliteConnection).end(false);
  }

  async destroy() {
    if (!this.pglite.closed) await this.pglite.close();
  }
}

class PGliteConnection implements DatabaseConnection {
  private transaction: { tx: Transaction; finish: (commit: boolean) => void; closed: Promise<void> } | undefined;

  constructor(private readonly pglite: PGlite) {}

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const { affectedRows, rows } = await (this.transaction?.tx ?? this.pglite).query<R>(
      compiled.sql,
      compiled.parameters as unknown[],
      { rowMode: 'object' },
    );
    return { numAffectedRows: affectedRows === undefined ? undefined : BigInt(affectedRows), rows };
  }

  // oxlint-disable-next-line require-yield -- Kysely's connection interface wants a generator; PGlite has none to give
  async *streamQuery(): AsyncIterableIterator<QueryResult<never>> {
    throw new Error('PGlite cannot stream a query');
  }

  /** Opens PGlite's transaction and keeps it open (its callback waits) until end(). */
  async begin() {
    let begun!: (tx: Transaction) => void;
    const opened = new Promise<Transaction>((resolve) => (begun = resolve));
    let finish!: (commit: boolean) => void;
    const finished = new Promise<boolean>((resolve) => (finish = resolve));
    const closed = this.pglite.transaction(async (tx) => {
      begun(tx);
      if (!(await finished)) await tx.rollback();
    });
    // A BEGIN that fails rejects `closed` before the callback runs.
    const tx = await Promise.race([opened, closed.then(() => undefined as never)]);
    this.transaction = { tx, finish, closed };
  }

  async end(commit: boolean) {
    const transaction = this.transaction;
    this.transaction = undefined;
    if (!transaction) return;
    transaction.finish(commit);
    if (commit) await transaction.closed;
    else await transaction.closed.catch(() => {});
  }
}
