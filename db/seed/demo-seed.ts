// The demo seed alone, in a module that imports nothing: the CLI's help names it, and loading the seeding entry points
// for it would load Kysely, the drivers and the holiday data only to print one number.
/** The demo seed of `npm start` and `cli seed --demo`, so both build the same demo database. */
export const DEMO_SEED = 20261122;
