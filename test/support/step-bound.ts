// Cases made of steps that each end by themselves (a CLI process run, a look at the database), bounded step by step
// instead of by one clock over the whole case. Mocha's timeout holds a whole case to one wall-clock bound, and a loaded
// machine stretches every step of it: a case of many steps crosses a bound that each of its steps stays far within
// (test/cli/cli.test.ts "users plan changes the plan", three CLI runs and two looks, ran past its 120 s in a loaded CI
// trial, load mostly 22 to 38). Here a case may take as long as its steps add up to; it fails only when one step gives
// no end within the bound, counted from the end of the step before it: a hung process or a look that never answers.
import type { Context, Func, Runnable, TestFunction } from 'mocha';

/**
 * The bound of a step that is a process of this checkout: a start until it serves or exits, a stop, a CLI run, a tool's
 * run. Alone such a step takes a second or a few (a first start of the embedded database ~5 s at most); a machine doing
 * twice its work doubles that. A step given no end within five minutes is a hung process, not a slow machine. The
 * runs of test/support/run-node.ts are killed 10 s before it (RUN_BOUND_MS), so that a failure shows their output.
 */
export const PROCESS_STEP_BOUND_MS = 300_000;

/** The case running in steps in this process, if any (mocha runs one case at a time in a process). */
let running: Runnable | undefined;

/**
 * Mocha's `it` for cases bounded by `stepBoundMs` per step (stepEnded), not as a whole; a test file declares its cases
 * with it (`const it = casesInSteps(…)`). Only `it(title, fn)` is offered: the cases' bodies are async functions.
 */
export function casesInSteps(stepBoundMs: number): (title: string, fn: (this: Context) => Promise<void>) => void {
  const mochaIt: TestFunction = globalThis.it;
  return (title, fn) => {
    mochaIt(title, async function (this: Context) {
      const test = this.test!;
      running = test;
      test.timeout(stepBoundMs);
      try {
        await fn.call(this);
      } finally {
        running = undefined;
      }
      // When a case ends, mocha also holds its whole length to its timeout: each step was held to it instead.
      test.timeout(0);
    } as Func);
  };
}

/** A step of the running case has ended: the case's bound counts again from now (its running timer restarts). */
export function stepEnded(): void {
  running?.timeout(running.timeout());
}
