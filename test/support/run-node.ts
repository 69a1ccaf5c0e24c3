// Runs a Node.js command (a CLI of node_modules, a script through tsx) as its own process and reports how it ended.
import { execFile } from 'node:child_process';
import { PROCESS_STEP_BOUND_MS, stepEnded } from './step-bound.ts';

/**
 * What `npm run cli` gives node (package.json): the CLI from its bundle, built from the sources when one has changed
 * (app/start.mjs), so that tests run the CLI that operators run.
 */
export const CLI = ['app/start.mjs', '--cli'];

/**
 * How long a run may take before it is killed: the tools these tests run do fixed work (a lint of the spec, a bundle,
 * a lock check: seconds of CPU alone), which a loaded machine stretches (a Redocly lint took 54 s at load ~28, past the
 * 50 s this was). A step's bound (PROCESS_STEP_BOUND_MS, five minutes) less a margin, so that a case bounded step by
 * step, or holding one run to five minutes, fails on the run's output.
 */
export const RUN_BOUND_MS = PROCESS_STEP_BOUND_MS - 10_000;

/** `env`: the command's environment (this process's when absent). A run's end is a step's (test/support/step-bound.ts). */
export function runNode(
  args: string[],
  cwd: string,
  env?: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      args,
      { cwd, timeout: RUN_BOUND_MS, ...(env ? { env } : {}) },
      (error, stdout, stderr) => {
        stepEnded();
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
      },
    );
  });
}
