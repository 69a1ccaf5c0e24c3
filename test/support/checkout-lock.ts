// A lock held across every process of this checkout, for a test that changes what they all share (the embedded
// database's template cache in node_modules/.cache): two runs of `npm test` side by side, as CI runs the two engines,
// would otherwise see each other's changes. The lock is a directory (mkdir is atomic) holding its holder's pid; one
// whose holder has died (a run killed midway) is taken over. A waiter looks again every 100 ms until it is free: how
// long that takes is the holder's work, so the caller's hook bounds it, not this module.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive } from '../../db/data-dir-lock.ts';

/** Waits until this process holds the lock at `path` (a directory to be); returns its release. */
export async function takeCheckoutLock(path: string): Promise<() => void> {
  for (;;) {
    try {
      mkdirSync(path, { mode: 0o700 });
      writeFileSync(join(path, 'pid'), String(process.pid), { mode: 0o600 });
      return () => rmSync(path, { recursive: true, force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (holderDied(path)) rmSync(path, { recursive: true, force: true });
    else await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** True when the lock's holder is known and no longer runs (a lock just made may not name its holder yet). */
function holderDied(path: string): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(join(path, 'pid'), 'utf8'));
  } catch {
    return false;
  }
  return Number.isInteger(pid) && pid > 0 && !isAlive(pid);
}
