// Root hooks for the whole run: one seeded test database (see test-db.ts), the loaded contracts, and at the
// end the coverage check — every documented status of every operation of every spec must have been exercised by
// some test, and every documented webhook event kind produced by one (test/support/coverage.ts; the report is written to .contract-coverage.json).
import { readdirSync } from 'node:fs';
import type { Context } from 'mocha';
import { loadContracts, exercised } from './contract.ts';
import { contractCoverage, eventKindCoverage, gapMessage, writeCoverageReport } from './coverage.ts';
import { documentedEventTypes } from './event-contract.ts';
import { runState } from './run-state.ts';
import { createTestDatabase, type TestDatabase } from './test-db.ts';

// Each module of the run must load once, as the ES module it is. With require(esm) on, mocha require()s each file
// first: tsx compiles it to CommonJS, and a file that fails there (rrule's default import has no CommonJS
// equivalent) is import()ed again, so every module it reaches exists twice, each copy with its own state. The
// mocharc files turn require(esm) off, and mocha then import()s every file.
if (process.features.require_module) throw new Error('mocha must import() the test files: run it with --no-experimental-require-module (as .mocharc.json does)');

/** The run's shared, seeded database. Tests that write use their own rows (their own keys, for example). */
export function testDatabase(): TestDatabase {
  if (!runState.database) throw new Error('the test database is created by the root beforeAll hook');
  return runState.database;
}

export const mochaHooks = {
  async beforeAll(this: Context) {
    this.timeout(180_000);
    await loadContracts();
    const database = (runState.database = await createTestDatabase());
    console.log(`    (tests run on ${database.description}${process.env.REDIS_URL ? ', Redis at ' + new URL(process.env.REDIS_URL).host : ''})`);
  },
  async afterAll(this: Context) {
    await runState.notifications?.close();
    await runState.database?.close();
    if (process.env.CONTRACT_COVERAGE === 'off' || !ranEveryTestFile(this)) return;
    const coverage = contractCoverage(await loadContracts(), exercised, { embeddedDatabase: !process.env.DATABASE_URL });
    const events = eventKindCoverage(documentedEventTypes(), runState.eventTypesSeen);
    writeCoverageReport(coverage, events);
    const gaps = gapMessage(coverage, events);
    if (gaps) throw new Error(gaps);
  },
};

/** The coverage check only means something when every test file ran in full (no file subset, no grep). */
function ranEveryTestFile(context: Context): boolean {
  if (process.argv.some((arg) => /^(-g|-f|--grep|--fgrep)(=|$)/.test(arg))) return false;
  const loaded = new Set(context.test?.parent?.suites.map((s) => s.file) ?? []);
  const testDir = new URL('../', import.meta.url);
  const expected = readdirSync(testDir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.test.ts') && !f.includes('.tmp-'))
    .map((f) => new URL(f, testDir).pathname);
  return expected.every((file) => loaded.has(file));
}
