// The processes a bench run measures from outside, as an operator would see them: started pinned to cores with
// taskset where it exists, their CPU clocks and memory read from /proc (Linux), stopped by signal.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

const TASKSET = ['/usr/bin/taskset', '/bin/taskset'].find((path) => existsSync(path));
const CLOCK_TICKS_PER_SECOND = clockTicks();

/**
 * Cores for the server(s) and the load generator: the server on the first `serverCores` cores, the load on the next
 * one. Undefined when taskset is missing or the machine has too few cores to keep them apart (then nothing is pinned).
 */
export function corePlan(serverCores: number): { server: string; load: string } | undefined {
  if (!TASKSET || availableParallelism() < serverCores + 1) return undefined;
  return { server: serverCores === 1 ? '0' : `0-${serverCores - 1}`, load: String(serverCores) };
}

/** `command args…` on the given cores (a taskset cpu list), or unpinned. */
export function pinned(cores: string | undefined, command: string, args: string[]): [string, string[]] {
  return cores && TASKSET ? [TASKSET, ['-c', cores, command, ...args]] : [command, args];
}

export interface Started {
  child: ChildProcess;
  baseUrl: string;
  /** Milliseconds from spawn to the first answered request. */
  readyMs: number;
  output(): string;
}

/**
 * Spawns a node program and waits until `readyPath` answers (any HTTP status), polling every 20 ms: the time to the
 * first served request, which is what someone starting the service waits for. The port is read from the program's
 * `listening on http://…:PORT` line.
 */
export async function startHttpProcess(
  args: string[],
  options: { env: NodeJS.ProcessEnv; cores?: string; readyPath: string; deadlineMs: number; cwd: string },
): Promise<Started> {
  const started = performance.now();
  const [command, argv] = pinned(options.cores, process.execPath, args);
  // stdout (the request log) goes nowhere but is still written, as in production; stderr carries the banner.
  const child = spawn(command, argv, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'ignore', 'pipe'] });
  let output = '';
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<never>((_resolve, reject) =>
    child.once('exit', (code, signal) =>
      reject(new Error(`${args.join(' ')} exited (${signal ?? code}) before serving:\n${output.slice(-2000)}`)),
    ),
  );
  exited.catch(() => {});
  const deadline = started + options.deadlineMs;
  const ready = (async () => {
    for (;;) {
      if (performance.now() > deadline)
        throw new Error(`${args.join(' ')} did not serve within ${options.deadlineMs} ms:\n${output.slice(-2000)}`);
      const port = /listening on http:\/\/[^:\s]+:(\d+)/.exec(output)?.[1];
      if (port) {
        const baseUrl = `http://127.0.0.1:${port}`;
        const answered = await fetch(baseUrl + options.readyPath, { signal: AbortSignal.timeout(2000) }).then(
          async (res) => (await res.arrayBuffer(), true),
          () => false,
        );
        if (answered) return baseUrl;
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  try {
    const baseUrl = await Promise.race([ready, exited]);
    return { child, baseUrl, readyMs: Math.round(performance.now() - started), output: () => output };
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the process has gone. */
export async function stopProcess(child: ChildProcess, graceMs = 15_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await gone;
  clearTimeout(timer);
}

/**
 * The pid itself and every descendant (cluster workers), read from /proc. taskset execs node in place, so the
 * spawned pid is the node process.
 */
export function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (!stat) continue;
    const list = children.get(stat.ppid) ?? [];
    list.push(Number(entry));
    children.set(stat.ppid, list);
  }
  const tree: number[] = [];
  const visit = (p: number) => {
    tree.push(p);
    for (const child of children.get(p) ?? []) visit(child);
  };
  visit(pid);
  return tree;
}

/** CPU time (user + system, all threads) of each pid so far, in microseconds; a pid that has gone is left out. */
export function cpuMicros(pids: number[]): Map<number, number> {
  const result = new Map<number, number>();
  for (const pid of pids) {
    const stat = readStat(pid);
    if (stat) result.set(pid, ((stat.utime + stat.stime) * 1_000_000) / CLOCK_TICKS_PER_SECOND);
  }
  return result;
}

/** CPU spent between two readings; a pid that appeared in between counts from zero (it started meanwhile). */
export function cpuSpent(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, micros] of after) total += micros - (before.get(pid) ?? 0);
  return total;
}

/** Resident memory now and at its peak (VmRSS, VmHWM) of a process tree, in MB (sums over the tree). */
export function memoryMb(pids: number[]): { rssMb: number; peakRssMb: number } {
  let rss = 0;
  let peak = 0;
  for (const pid of pids) {
    let status: string;
    try {
      status = readFileSync(`/proc/${pid}/status`, 'utf8');
    } catch {
      continue;
    }
    rss += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
    peak += Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  }
  return { rssMb: Math.round(rss / 1024), peakRssMb: Math.round(peak / 1024) };
}

function readStat(pid: number): { ppid: number; utime: number; stime: number } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces and parentheses; the fields after its last ')' are fixed.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { ppid: Number(fields[1]), utime: Number(fields[11]), stime: Number(fields[12]) };
}

function clockTicks(): number {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
}
