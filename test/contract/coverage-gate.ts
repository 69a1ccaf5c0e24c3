// npm run contract:coverage
// Runs the whole test suite, then prints which documented statuses of each operation the tests exercised (from the
// report the run's end writes, .contract-coverage.json). Exits non-zero when the suite failed or any operation or
// documented status went untested.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  coverageTable,
  gapMessage,
  REPORT_FILE,
  type EventKindCoverage,
  type OperationCoverage,
} from '../support/coverage.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const started = Date.now();
const env = { ...process.env };
delete env.CONTRACT_COVERAGE;
// `npm test` holds the suite's one file list (test/full-run.mocharc.cjs), so the coverage run is exactly the suite.
const mocha = spawnSync('npm', ['test', '--silent'], { cwd: root, env, stdio: 'inherit' });

if (!existsSync(REPORT_FILE) || statSync(REPORT_FILE).mtimeMs < started) {
  console.error('\nThe test run wrote no coverage report (it stopped before its end, or ran only part of the suite).');
  process.exit(1);
}
const report = JSON.parse(readFileSync(REPORT_FILE, 'utf8')) as {
  operations: OperationCoverage[];
  events: EventKindCoverage[];
};
const rows = report.operations;
console.log(`\nContract coverage (documented statuses × what the tests exercised):\n\n${coverageTable(rows)}\n`);
console.log(
  `Webhook event kinds: ${report.events.map((e) => `${e.type} ${e.produced ? '✓' : '✗ (no test produced it)'}`).join(', ')}\n`,
);
const gaps = gapMessage(rows, report.events);
if (gaps) console.error(gaps);
else console.log(`Every documented status of all ${rows.length} operations was exercised.`);
process.exit(gaps || mocha.status !== 0 ? 1 : 0);
