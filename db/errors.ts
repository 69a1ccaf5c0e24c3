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
