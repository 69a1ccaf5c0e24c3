// Runs a Node.js command (a CLI of node_modules, a script through tsx) as its own process and reports how it ended.
import { execFile } from 'node:child_process';

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
