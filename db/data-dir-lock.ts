// PGlite has no server to arbitrate access: two processes on one data directory silently lose writes.
// A lock file with the owner's pid makes the second process (a CLI run while the server is up, say) fail loudly.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

class DataDirInUseError extends Error {}

/** Takes the directory's lock for this process; the returned function gives it back (so does the exit). */
export function lockDataDir(dataDir: string): () => void {
  const lockFile = join(dataDir, 'study-companion.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(lockFile, String(process.pid), { flag: 'wx', mode: 0o600 });
      const release = () => {
        process.off('exit', release);
        rmSync(lockFile, { force: true });
      };
      process.on('exit', release);
      return release;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number(readFileSync(lockFile, 'utf8'));
      if (isAlive(owner)) {
        throw new DataDirInUseError(
          `the embedded database in ${dataDir} is in use by process ${owner}; stop it first (or use DATABASE_URL with PostgreSQL)`,
        );
      }
      rmSync(lockFile, { force: true }); // left by a process that died; take it over
    }
  }
  throw new DataDirInUseError(`could not lock ${dataDir}`);
}

/** Whether the process `pid` runs (one of another user's, which this process may not signal, included). */
export function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
