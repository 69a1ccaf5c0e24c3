// The delivery attempts' share of the database pool, in this process: at most `connections` of their transactions
// (an admission, a recording) run at once, the others wait in memory in arrival order. Attempts to slow receivers
// start and end in waves (a crowd's receivers answering in the same second): unbounded, a wave's transactions would
// take every pooled connection, and the API's requests and the relay (which fans out and dispatches the other
// accounts' first attempts) would wait behind them.
export type PoolShare = <T>(work: () => Promise<T>) => Promise<T>;

export function poolShare(connections: number): PoolShare {
  let inUse = 0;
  const waiting: Array<() => void> = [];
  return async (work) => {
    if (inUse < connections) inUse++;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await work();
    } finally {
      // The place goes straight to the next in line, or is given back.
      const next = waiting.shift();
      if (next) next();
      else inUse--;
    }
  };
}
