// How long the event loop was blocked while some work ran: a request that computes for 100 ms on the main thread
// delays every concurrent request (a health check included) by as much, whatever else the test measures.
//
// A timer fires every millisecond while the work runs; a stretch between two firings is a time the loop ran nothing
// else. Its wall time is what a concurrent request waited, and it grows when a loaded machine takes the core away. The
// process's CPU time over the stretch does not, but it counts other threads too (argon2's hashing, the GC's helpers).
// Both are at least the stretch's work on the main thread, so the smaller of the two measures that work: a busy
// machine alone or a busy thread pool alone cannot inflate it, only both in the same stretch.
import { cpuUsage } from 'node:process';

/** The most a hostile request may block the event loop, so delay a concurrent request. */
export const EVENT_LOOP_BUDGET_MS = 100;

interface Stretches<T> {
  result: T;
  /** The longest wall time the loop ran nothing else: what a concurrent request waited. */
  blockedMs: number;
  /** The longest stretch's work, as the smaller of its wall and CPU time (see the top of the file). */
  busyMs: number;
}

/** Runs `work` and reports the longest stretch the event loop could not run anything else meanwhile. */
export async function longestEventLoopBlock<T>(work: () => Promise<T>): Promise<Stretches<T>> {
  let blockedMs = 0;
  let busyMs = 0;
  let wall = performance.now();
  let cpu = cpuUsage();
  const stretchEnds = () => {
    const [nowWall, nowCpu] = [performance.now(), cpuUsage()];
    const wallMs = nowWall - wall;
    const cpuMs = (nowCpu.user - cpu.user + nowCpu.system - cpu.system) / 1000;
    blockedMs = Math.max(blockedMs, wallMs);
    busyMs = Math.max(busyMs, Math.min(wallMs, cpuMs));
    [wall, cpu] = [nowWall, nowCpu];
  };
  // The first stretch runs from here to the timer's first firing, so a block at the very start of `work` is in it; the
  // last one, from the timer's last firing to the end of `work`, is measured when `work` has ended, so a block at its
  // very end is in that one. (Sleeping a tick of the timer before and after `work` saw the same, only later a call.)
  const timer = setInterval(stretchEnds, 1);
  try {
    const result = await work();
    stretchEnds();
    return { result, blockedMs, busyMs };
  } finally {
    clearInterval(timer);
  }
}

/**
 * Asserts that `work` does not keep the event loop busy longer than the budget; returns what its last run returned. It
 * runs up to `attempts` times and passes if one run stays within the budget: a hostile request blocks on every run,
 * while a full collection of the GC lengthens one run and rarely three in a row. `work` must be repeatable.
 */
export async function withinEventLoopBudget<T>(what: string, work: () => Promise<T>, attempts = 3): Promise<T> {
  const busy: number[] = [];
  for (let attempt = 0; attempt < attempts; attempt++) {
    const { result, busyMs } = await longestEventLoopBlock(work);
    if (busyMs <= EVENT_LOOP_BUDGET_MS) return result;
    busy.push(busyMs);
  }
  const runs = busy.map((ms) => ms.toFixed(0)).join(' ms, then ');
  throw new Error(`${what} kept the event loop busy for ${runs} ms (budget ${EVENT_LOOP_BUDGET_MS} ms)`);
}
