// A partner key's default limits alone, in a module that imports nothing: the CLI's help names them, and loading the
// key queries for them would load Kysely and the PostgreSQL driver only to print two numbers.
export const DEFAULT_KEY_LIMITS = { per_minute: 60, per_day: 10_000 } as const;
