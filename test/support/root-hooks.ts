// Root hooks of each test process: one seeded test database per process when a loaded file needs it (see
// shared-database.ts and test-db.ts), the loaded contracts, and
// after each root suite a record of what the process has exercised so far (process-records.ts). In serial mode the
// process is mocha's own and its root suite holds every file; in parallel mode each worker process runs these hooks
// around every file it is given, and keeps its database from one file to the next. The run's end (run-gate.ts, in
// mocha's own process) closes the databases and judges the contract coverage over every process's record.
import type { Context } from 'mocha';
import { loadContracts } from './contract.ts';
import { writeProcessRecord } from './process-records.ts';
import { runState } from './run-state.ts';

// Each module of the run must load once, as the ES module it is. With require(esm) on, mocha require()s each file
// first: tsx compiles it to CommonJS, and a file that fails there (rrule's default import has no CommonJS
// equivalent) is import()ed again, so every module it reaches exists twice, each copy with its own state. The
// mocharc files turn require(esm) off, and mocha then import()s every file.
if (process.features.require_module)
  throw new Error(
    'mocha must import() the test files: run it with --no-experimental-require-module (as .mocharc.json does)',
  );

export const mochaHooks = {
  async beforeAll(this: Context) {
    this.timeout(180_000);
    await loadContracts();
    if (runState.database || !runState.databaseWanted) return;
    // Imported here, not above: PGlite, the migrations and the seed are modules a run without a database never loads.
    const { createTestDatabase } = await import('./test-db.ts');
    const database = (runState.database = await createTestDatabase());
    console.log(
      `    (tests run on ${database.description}${process.env.REDIS_URL ? ', Redis at ' + new URL(process.env.REDIS_URL).host : ''})`,
    );
    // Named in the record at once, so the run's end drops it even if this process dies before its first file ends.
    writeProcessRecord();
  },
  afterAll(this: Context) {
    for (const suite of this.test?.parent?.suites ?? []) if (suite.file) runState.filesRun.add(suite.file);
    writeProcessRecord();
  },
};
