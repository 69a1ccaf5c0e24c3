// The real entry point (app/start.mjs, what npm start runs: app/main.ts compiled) in a child process, as an operator
// runs it: for tests of start-up, stops, signals and faults that an in-process app cannot show (exit codes, what
// survives a kill, what a client sees). Its start (until it serves or prints what a test waits for) and its exit each end
// a step of a case bounded step by step (test/support/step-bound.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { stepEnded } from './step-bound.ts';

const root = new URL('../../', import.meta.url).pathname;

export interface ServerProcess {
  child: ChildProcess;
  /** The base URL once the server prints its banner; rejects if the process exits first. */
  listening: Promise<string>;
  /** The exit code (null when ended by a signal). */
  exited: Promise<number | null>;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves with the first match of `pattern` in the output (log lines included: set LOG_LEVEL to see them). */
  waitFor(pattern: RegExp): Promise<RegExpExecArray>;
}

/** SECRETS_KEY of the processes tests start (on PostgreSQL it encrypts the stored signing keys). */
export const TEST_SECRETS_KEY = Buffer.alloc(32, 7).toString('base64');

/** Servers this test process started and that still run: a test that failed before stopping its server. */
const running = new Set<ChildProcess>();
// A failed test leaves no server behind (it would hold its data directory and a core's share after the run).
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * The issuer of every test process's tokens, as a deployment sets PUBLIC_URL: the processes of one test, and one process
 * and its restart, each on another free port, accept each other's tokens.
 */
export const TEST_PUBLIC_URL = 'http://localhost:3000';

/**
 * Starts `node app/start.mjs` with the test's environment plus `env` (a value of undefined removes
 * a variable). PORT defaults to 0 (a free port), PUBLIC_URL on a free port to TEST_PUBLIC_URL, LOG_LEVEL to warn and
 * SECRETS_KEY to TEST_SECRETS_KEY.
 * `umask`: the one the process starts with (this process's otherwise), as a shell's `umask` before the command.
 */
export function startServerProcess(
  env: Record<string, string | undefined>,
  args: string[] = [],
  options: { umask?: number } = {},
): ServerProcess {
  const merged: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: '0',
    // On a port the test chose, the service's own default (http://localhost:$PORT) names it, as a guide's reader has it.
    ...(env.PORT === undefined || env.PORT === '0' ? { PUBLIC_URL: TEST_PUBLIC_URL } : {}),
    LOG_LEVEL: 'warn',
    SECRETS_KEY: TEST_SECRETS_KEY,
  };
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete merged[name];
    else merged[name] = value;
  }
  // A child inherits the umask at spawn, which is synchronous: this process's is set back before anything else runs.
  const umask = options.umask === undefined ? undefined : process.umask(options.umask);
  let child: ChildProcess;
  try {
    const stdio = ['ignore', 'pipe', 'pipe'] as const;
    child = spawn(process.execPath, ['app/start.mjs', ...args], { cwd: root, env: merged, stdio: [...stdio] });
  } finally {
    if (umask !== undefined) process.umask(umask);
  }
  running.add(child);
  child.on('exit', () => running.delete(child));
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      stepEnded();
      resolve(code);
    }),
  );
  const waitFor = (pattern: RegExp) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const poll = setInterval(() => {
        const match = pattern.exec(output);
        if (match) {
          clearInterval(poll);
          stepEnded();
          resolve(match);
        }
      }, 20);
      void exited.then((code) => {
        clearInterval(poll);
        const match = pattern.exec(output);
        if (match) resolve(match);
        else reject(new Error(`exited with ${code} before printing ${pattern}:\n${output}`));
      });
    });
  const listening = waitFor(/listening on (http:\/\/localhost:\d+)/).then((match) => match[1]!);
  listening.catch(() => {}); // a test that expects a failed start awaits `exited` instead
  return { child, listening, exited, output: () => output, waitFor };
}
