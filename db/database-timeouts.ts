// The bounds on waits for PostgreSQL, apart from the connection code, so that the settings can name their defaults
// without loading the drivers (a CLI call through the running server loads neither).
/** Bounds on every wait for PostgreSQL, so that a server that is down or stuck fails a request instead of hanging it. */
export interface DatabaseTimeouts {
  /** Opening a connection, and waiting for a free one when the pool is exhausted. */
  connectMs: number;
  /** One statement on the server (statement_timeout); the client gives up on the reply a little later. */
  statementMs: number;
}

export const DEFAULT_DATABASE_TIMEOUTS: DatabaseTimeouts = { connectMs: 5_000, statementMs: 10_000 };
