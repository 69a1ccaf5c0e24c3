// `TEST_FILE_TIMES=path npm test`: each worker process appends to `path` one JSON line per test file it ran (a serial
// run, `npx mocha` without --parallel, writes one line for all its files): the file, the process, and the time from the
// end of the process's previous file (or its start) to the end of this one, loading and root hooks included, so that
// the lines of a run add up to its workers' time. To see which files a run spends its time on, relative to each other:
// a loaded machine stretches every time, not their shares. Beside the time, the CPU the file cost in that span: the
// process's own (`cpuMs`) and that of the child processes it started and saw end (`childCpuMs`: servers, CLI runs,
// tools; a browser's renderers are not among them, as Chromium starts them outside its own children). On a machine
// whose cores are all busy, the CPU is what one file takes from the others. Without the variable the hooks do nothing.
import { appendFileSync, readFileSync } from 'node:fs';
import type { Context } from 'mocha';

const output = process.env.TEST_FILE_TIMES;
/** performance.now() counts from the process's start: the first file's time includes the worker's start. */
let previousEnd = 0;
let previousCpu = { own: 0, children: 0 };

export const mochaHooks = output
  ? {
      afterAll(this: Context) {
        const now = performance.now();
        const cpu = cpuSoFar();
        const files = (this.test?.parent?.suites ?? []).flatMap((suite) => (suite.file ? [suite.file] : []));
        const line = {
          files: [...new Set(files)],
          pid: process.pid,
          ms: Math.round(now - previousEnd),
          cpuMs: Math.round(cpu.own - previousCpu.own),
          childCpuMs: Math.round(cpu.children - previousCpu.children),
        };
        appendFileSync(output, JSON.stringify(line) + '\n');
        previousEnd = now;
        previousCpu = cpu;
      },
    }
  : {};

/** Milliseconds of CPU (user and system) of this process, and of its children that have ended and been waited for. */
function cpuSoFar(): { own: number; children: number } {
  const { userCPUTime, systemCPUTime } = process.resourceUsage();
  return { own: (userCPUTime + systemCPUTime) / 1000, children: childrenCpu() };
}

/** cutime and cstime of /proc/self/stat (Linux), in clock ticks of 10 ms; 0 where there is no /proc. */
function childrenCpu(): number {
  try {
    // The command name (2nd field) may hold spaces: count the fields after its closing parenthesis.
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 16 and 17 of the line are the 14th and 15th after the name (state is the 3rd field).
    return (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    return 0;
  }
}
