// How long the event loop was blocked while some work ran: a request that computes for 100 ms on the main thread
// delays every concurrent request (a health check included) by as much, whatever else the test measures.
import { monitorEventLoopDelay } from 'node:perf_hooks';

/** The most a hostile request may block the event loop, so delay a concurrent request. */
export const EVENT_LOOP_BUDGET_MS = 100;

/** Runs `work` and reports the longest stretch (ms) the event loop could not run anything else meanwhile. */
export async function longestEventLoopBlock<T>(work: () => Promise<T>): Promise<{ result: T; blockedMs: number }> {
  const histogram = monitorEventLoopDelay({ resolution: 5 });
  histogram.enable();
  try {
    const result = await work();
    return { result, blockedMs: histogram.max / 1e6 };
  } finally {
    histogram.disable();
  }
}

/** Asserts that `work` never blocks the event loop longer than the budget; returns what `work` returned. */
export async function withinEventLoopBudget<T>(what: string, work: () => Promise<T>): Promise<T> {
  const { result, blockedMs } = await longestEventLoopBlock(work);
  if (blockedMs > EVENT_LOOP_BUDGET_MS) throw new Error(`${what} blocked the event loop for ${blockedMs.toFixed(0)} ms (budget ${EVENT_LOOP_BUDGET_MS} ms)`);
  return result;
}
