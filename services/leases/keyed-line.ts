// Work put in line per key, in this process: one task of a key runs at a time, the next ones wait in memory (holding
// nothing, a database connection least of all), and a key with `maxPending` tasks already in line is told so at once
// instead of growing its line. Other keys never wait for it.

export interface KeyedLine {
  /**
   * Runs `task` once the tasks of `key` put in line before it have settled; or returns `undefined` at once, without
   * running it, when `key` has `maxPending` tasks running or waiting already.
   */
  tryRun<T>(key: string, task: () => Promise<T>): Promise<T> | undefined;
  /** Tasks of `key` running or waiting now. */
  pending(key: string): number;
}

interface Line {
  pending: number;
  /** Settles when the last task put in line has settled. */
  tail: Promise<void>;
}

export function keyedLine(maxPending: number): KeyedLine {
  const lines = new Map<string, Line>();
  return {
    tryRun(key, task) {
      let line = lines.get(key);
      if (line && line.pending >= maxPending) return undefined;
      if (!line) lines.set(key, (line = { pending: 0, tail: Promise.resolve() }));
      const current = line;
      current.pending += 1;
      const result = current.tail.then(task);
      current.tail = result.then(
        () => {},
        () => {},
      );
      void current.tail.then(() => {
        current.pending -= 1;
        if (current.pending === 0 && lines.get(key) === current) lines.delete(key);
      });
      return result;
    },
    pending: (key) => lines.get(key)?.pending ?? 0,
  };
}
