// A start-up that fails says why in one line naming what to fix, and exits 1: an operator reads the line, not a
// stack trace. The stack goes to the log at debug level (LOG_LEVEL=debug) for the rare error this does not know.
import type { DbTarget } from '../db/connect.ts';
import { errorMessage } from '../db/errors.ts';
import { ConfigError } from '../server/process/config-error.ts';

/** One line that says what went wrong at start-up and, where it can, what to do. */
export function describeStartupError(error: unknown, context: { database?: DbTarget; port?: number }): string {
  if (error instanceof ConfigError) return error.message;
  const code = codeIn(error);
  const database =
    context.database && 'databaseUrl' in context.database ? new URL(context.database.databaseUrl) : undefined;
  if (code === 'EADDRINUSE')
    return `PORT ${context.port} is already in use (is another server running?); stop it or choose another port with PORT=`;
  if (code === 'EACCES' && context.port !== undefined && context.port < 1024)
    return `PORT ${context.port} needs privileges to listen on; choose a port from 1024 with PORT=`;
  // PgBouncer refuses the startup parameter a direct connection sets (db/connect.ts): the pooler is not declared.
  if (database && /unsupported startup parameter: statement_timeout/.test(errorMessage(error))) {
    return `a connection pooler (PgBouncer) refused the statement_timeout startup parameter: behind a transaction-mode pooler set DATABASE_POOLER=transaction, with DATABASE_SESSION_URL pointing at PostgreSQL itself`;
  }
  if (database) {
    const name = decodeURIComponent(database.pathname.slice(1)) || '(default)';
    if (code === '3D000')
      return `DATABASE_URL names the database "${name}", which does not exist on ${database.host}; create it (createdb -h ${database.hostname} -p ${database.port || 5432} ${name}) or fix the URL`;
    if (code === '28P01' || code === '28000')
      return `DATABASE_URL: PostgreSQL at ${database.host} refused the credentials for database "${name}"`;
  }
  return firstLine(error);
}

/** The error's own code, or that of an error it wraps (a failed migration wraps the driver's error). */
function codeIn(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

function firstLine(error: unknown): string {
  return errorMessage(error).split('\n')[0]!.trim() || 'unknown error';
}
