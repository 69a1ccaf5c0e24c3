// Runs a Node.js command (a CLI of node_modules, a script through tsx) as its own process and reports how it ended.
import { execFile } from 'node:child_process';

/**
 * What `npm run cli` gives node (package.json): the CLI from its bundle, built from the sources when one has changed
 * (app/start.mjs), so that tests run the CLI that operators run.
 */
export const CLI = ['app/start.mjs', '--cli'];

/** `env`: the command's environment (this process's when absent). */
export function runNode(
  args: string[],
  cwd: string,
  env?: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd, timeout: 50_000, ...(env ? { env } : {}) }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
    });
  });
}
