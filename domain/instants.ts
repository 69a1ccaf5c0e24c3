// The span of time the service stores and computes with. The API's formats (server/contract/formats.ts) refuse
// instants outside it, and the study logic clamps what it projects to it.

/** The first and last instants the service takes: the years 0001 to 9999 (UTC), which PostgreSQL and RFC 3339 share. */
export const FIRST_INSTANT = -62_135_596_800_000; // 0001-01-01T00:00:00.000Z
export const LAST_INSTANT = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z
