// The start and end of a whole test run, as mocha's global fixtures: they run once, in mocha's own process, in serial
// and parallel mode alike (never in a worker). The start makes the directory every test process writes its record to
// (process-records.ts); the end, once every worker has ended, closes this process's database and drops the workers',
// then judges the contract coverage over the union of the records: every documented status of every operation of
// every spec must have been exercised by some test, and every documented webhook event kind produced by one
// (coverage.ts; the report is written to .contract-coverage.json). A gap fails the run: mocha counts a global
// teardown that throws as a failure, so `npm test` exits non-zero.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadContracts } from './contract.ts';
import { contractCoverage, eventKindCoverage, gapMessage, writeCoverageReport } from './coverage.ts';
import { dumpsMissing } from './embedded-dumps.ts';
import { documentedEventTypes } from './event-contract.ts';
import { readRunRecords, RECORDS_DIRECTORY_VARIABLE } from './process-records.ts';
import { runState } from './run-state.ts';

export async function mochaGlobalSetup() {
  // Set before mocha starts its workers, which inherit this process's environment.
  process.env[RECORDS_DIRECTORY_VARIABLE] = mkdtempSync(join(tmpdir(), 'test-run-'));
  // After a clean install or a changed migration, the dumps every embedded test database is loaded from (test-db.ts)
  // are made here, once and before the workers start: not by each worker at once, nor within some test's timeout.
  if (dumpsMissing()) await (await import('./test-db.ts')).prepareEmbeddedDumps();
}

export async function mochaGlobalTeardown() {
  const directory = process.env[RECORDS_DIRECTORY_VARIABLE]!;
  try {
    await runState.notifications?.close();
    await runState.database?.close();
    const records = readRunRecords(directory);
    if (records.otherDatabaseUrls.length > 0) {
      const { dropServerDatabase } = await import('./test-db.ts');
      await Promise.all(records.otherDatabaseUrls.map(dropServerDatabase));
    }
    if (process.env.CONTRACT_COVERAGE === 'off' || !ranEveryTestFile(records.files)) return;
    const coverage = contractCoverage(await loadContracts(), records.exercised, {
      embeddedDatabase: !process.env.DATABASE_URL,
    });
    const events = eventKindCoverage(documentedEventTypes(), records.eventTypesSeen);
    writeCoverageReport(coverage, events);
    const gaps = gapMessage(coverage, events);
    if (gaps) throw new Error(gaps);
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

/** The coverage check only means something when every test file ran in full (no file subset, no grep). */
function ranEveryTestFile(filesRun: ReadonlySet<string>): boolean {
  if (process.argv.some((arg) => /^(-g|-f|--grep|--fgrep)(=|$)/.test(arg))) return false;
  const testDir = new URL('../', import.meta.url);
  const expected = readdirSync(testDir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.test.ts') && !f.includes('.tmp-'))
    .map((f) => new URL(f, testDir).pathname);
  return expected.every((file) => filesRun.has(file));
}
