// Timestamps inside JSON built by a query (json_agg, Kysely's jsonArrayFrom). JSON has no timestamp type: to_json
// writes one as text in the session's time zone, with offsets JavaScript cannot parse for old dates (Asia/Almaty in the
// year 50 is +05:07:48). Epoch milliseconds read the same on every server and in every session.
import { sql, type RawBuilder } from 'kysely';

/**
 * The timestamp column as whole epoch milliseconds, as pg's own parser reads it (finer digits dropped); null stays
 * null, so a nullable column is `instantMs<number | null>(…)`.
 */
export function instantMs<T extends number | null = number>(column: string): RawBuilder<T> {
  return sql<T>`floor(extract(epoch from ${sql.ref(column)}) * 1000)`;
}

/** An instantMs value back as a Date. */
export function fromInstantMs(ms: number): Date;
export function fromInstantMs(ms: number | null): Date | null;
export function fromInstantMs(ms: number | null): Date | null {
  return ms === null ? null : new Date(ms);
}
