// The process's shared, seeded test database (test-db.ts), for the test files that use it. Importing this module is
// what asks for it: the root hooks build the database (migrations and seed, many seconds) only in a process that has
// loaded a file reaching this module, so a run of pure unit files builds none. Mocha loads every file of a run (of a
// file, in a parallel worker) before the root hooks run, so the request is always in before the hooks look.
import { runState } from './run-state.ts';
import type { TestDatabase } from './test-db.ts';

runState.databaseWanted = true;

/** The shared database. Tests that write use their own rows (their own keys, for example). */
export function testDatabase(): TestDatabase {
  if (!runState.database) throw new Error('the test database is created by the root beforeAll hook');
  return runState.database;
}
