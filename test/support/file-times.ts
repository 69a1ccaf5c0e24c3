// `TEST_FILE_TIMES=path npm test`: each worker process appends to `path` one JSON line per test file it ran (a serial
// run, `npx mocha` without --parallel, writes one line for all its files): the file, the process, and the time from the
// end of the process's previous file (or its start) to the end of this one, loading and root hooks included, so that
// the lines of a run add up to its workers' time. To see which files a run spends its time on, relative to each other:
// a loaded machine stretches every time, not their shares. Without the variable the hooks do nothing.
import { appendFileSync } from 'node:fs';
import type { Context } from 'mocha';

const output = process.env.TEST_FILE_TIMES;
/** performance.now() counts from the process's start: the first file's time includes the worker's start. */
let previousEnd = 0;

export const mochaHooks = output
  ? {
      afterAll(this: Context) {
        const now = performance.now();
        const files = (this.test?.parent?.suites ?? []).flatMap((suite) => (suite.file ? [suite.file] : []));
        const line = { files: [...new Set(files)], pid: process.pid, ms: Math.round(now - previousEnd) };
        appendFileSync(output, JSON.stringify(line) + '\n');
        previousEnd = now;
      },
    }
  : {};
