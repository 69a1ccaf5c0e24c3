// `npm test`: every test file, on two worker processes, the longest first. Mocha's parallel mode hands the files to
// its workers in the order it is given, the next to whichever worker is free, and its own order is the files' paths:
// a long file among the last (the test/unit/ files come last) kept one worker busy while the other had nothing left.
// Handing out the longest first leaves the short ones to fill in at the end. LONGEST names the files that take the
// most CPU on either engine (TEST_FILE_TIMES, docs/performance.md; the browser the docs file drives is not in those
// figures, but is most of that file's time), the longest first. A file missing from the list only runs later, so a
// stale entry costs time, never a file. The other settings are those of every run (.mocharc.json).
const { readdirSync } = require('node:fs');
const { join } = require('node:path');
const base = require('../.mocharc.json');

const LONGEST = [
  'test/docs/docs.test.ts',
  'test/cli/cli.test.ts',
  'test/docs/guide-commands.test.ts',
  'test/cli/move-to-postgres.test.ts',
  'test/contract/property/spec-driven.test.ts',
  'test/docs/workflows.test.ts',
  'test/contract/examples/examples.test.ts',
  'test/server/start.test.ts',
  'test/unit/reference-ids.test.ts',
  'test/contract/spec/lock.test.ts',
  'test/contract/property/hostile-corpus.test.ts',
  'test/cli/server-socket.test.ts',
  'test/server/documented-statuses.test.ts',
  'test/mock/mock.test.ts',
  'test/db/embedded-vacuum.test.ts',
];

const root = join(__dirname, '..');
const files = readdirSync(join(root, 'test'), { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.test.ts') && !file.includes('.tmp-'))
  .map((file) => join('test', file))
  .sort();
const longest = LONGEST.filter((file) => files.includes(file));

module.exports = {
  ...base,
  parallel: true,
  jobs: 2,
  spec: [...longest, ...files.filter((file) => !longest.includes(file))],
};
