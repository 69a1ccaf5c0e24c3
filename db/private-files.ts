// What the service keeps on disk (the embedded database, its template, the keys beside it) is the students' data:
// owner-only, whatever the umask the process was started with. PGlite's NodeFS creates its files under the process's
// umask (0666 under the usual 022, before db/pglite-owner-only-fs.ts), so an entry point sets OWNER_ONLY_UMASK before
// anything is written, directories are made with mode 0700 (a umask only takes bits away), and a start tightens what
// an earlier release, a copy or an operator left open (tightenModes).
import { chmodSync, lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** No bit for the group or others on anything this process creates. */
export const OWNER_ONLY_UMASK = 0o077;
const GROUP_AND_OTHERS = 0o077;

/** What a look at a tree found: its entries other users can reach, and how many entries it has. */
export interface ReachableEntries {
  /** Paths with a group or other permission bit, with their modes (e.g. 0o666). */
  reachable: Array<{ path: string; mode: number; owner: number }>;
  entries: number;
}

/**
 * The entries of `root` (itself included) that give the group or others any permission. Symbolic links are not
 * followed (their own modes mean nothing on Linux); a missing `root` has none.
 */
export function reachableEntries(root: string): ReachableEntries {
  const found: ReachableEntries = { reachable: [], entries: 0 };
  const visit = (path: string) => {
    const stats = unlessGone(() => lstatSync(path));
    if (!stats || stats.isSymbolicLink()) return;
    found.entries++;
    if (stats.mode & GROUP_AND_OTHERS) found.reachable.push({ path, mode: stats.mode & 0o7777, owner: stats.uid });
    if (stats.isDirectory()) for (const entry of unlessGone(() => readdirSync(path)) ?? []) visit(join(path, entry));
  };
  visit(root);
  return found;
}

/**
 * Takes every group and other bit off the entries of `root` (itself included) that this process may change: its own
 * (a template cache installed by another user is theirs to tighten). Returns how many it changed.
 */
export function tightenModes(root: string): number {
  const uid = process.getuid?.();
  const mine = (owner: number) => uid === undefined || uid === 0 || owner === uid;
  const changeable = reachableEntries(root).reachable.filter(({ owner }) => mine(owner));
  for (const { path, mode } of changeable) unlessGone(() => chmodSync(path, mode & ~GROUP_AND_OTHERS));
  return changeable.length;
}

/** An entry removed during the walk (a temporary file renamed, a cache being replaced) has nothing to tighten. */
function unlessGone<T>(look: () => T): T | undefined {
  try {
    return look();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
