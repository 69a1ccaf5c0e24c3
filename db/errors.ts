// PostgreSQL errors the application turns into answers; pg and PGlite both expose the SQLSTATE as `code`.

/** True for a unique violation (23505). */
export function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505';
}

/** The name of the constraint or unique index a unique violation broke, when the driver reports it. */
export function violatedConstraint(error: unknown): string | undefined {
  if (!isUniqueViolation(error)) return undefined;
  const constraint = (error as { constraint?: unknown }).constraint;
  return typeof constraint === 'string' ? constraint : undefined;
}

/**
 * True for a transaction the server aborted to break a deadlock (40P01) or because it could not be serialized
 * (40001): nothing was wrong with it, and run again it will usually succeed (db/student-transaction.ts).
 */
export function isSerializationFailure(error: unknown): boolean {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return code === '40P01' || code === '40001';
}

/**
 * SQLSTATEs of a server that is gone, going or overloaded rather than a statement that is wrong: connection
 * exceptions (class 08), admin/crash shutdown and "cannot connect now" (57P01–57P03), statement timeout or
 * cancellation (57014), too many connections (53300), a read-only standby after failover (25006).
 */
const UNAVAILABLE_SQLSTATES = /^(08...|57P0[123]|57014|53300|25006)$/;
/** Node's socket errors on the way to the server. */
const UNAVAILABLE_SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
]);
/** pg's and pg-pool's own errors, which carry no code: a dropped socket, a connect or read timeout, an exhausted pool. */
const UNAVAILABLE_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error)/;

/**
 * True when the database failed the request for reasons outside it (unreachable, terminated, timed out, out of
 * connections): worth a 503 and a retry. Any other error is a bug and stays a 500.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  if (error instanceof AggregateError) return error.errors.some(isDatabaseUnavailable); // a refused dual-stack connect
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (UNAVAILABLE_SQLSTATES.test(code) || UNAVAILABLE_SOCKET_CODES.has(code))) return true;
  return typeof message === 'string' && UNAVAILABLE_MESSAGES.test(message);
}

/** Some errors (AggregateError from a dual-stack connect) carry an empty message; fall back to their parts. */
export function errorMessage(error: unknown): string {
  if (error instanceof AggregateError && !error.message) return error.errors.map(errorMessage).join('; ');
  if (error instanceof Error) return error.message || String((error as { code?: unknown }).code ?? error.name);
  return String(error);
}
