// Run in a child process by db/pglite-template.ts: creates the embedded database's data directory given as the only
// argument and migrates it, then exits, taking initdb's memory with it. The parent holds the directory meanwhile.
// Without an argument (npm's postinstall) it makes the cached template that new data directories are copied from.
import { PGlite } from '@electric-sql/pglite';
import { connect, PGLITE_OPTIONS } from './connect.ts';
import { migrateToLatest } from './migrate.ts';
import { cachedTemplate } from './pglite-template.ts';
import { OWNER_ONLY_UMASK } from './private-files.ts';

// PGlite writes the directory's files with the process's umask (db/private-files.ts).
process.umask(OWNER_ONLY_UMASK);

const dataDir = process.argv[2];
if (dataDir) {
  const pglite = new PGlite(dataDir, PGLITE_OPTIONS);
  const db = connect({ pglite });
  await migrateToLatest(db);
  await db.destroy(); // closes the PGlite too
} else {
  try {
    process.stdout.write(
      `embedded database template: ${cachedTemplate() ?? 'not cached (node_modules/.cache is not writable)'}\n`,
    );
  } catch (error) {
    // Never fails an install: without a template the first start builds the database itself.
    process.stderr.write(
      `embedded database template not made (the first start makes it): ${error instanceof Error ? error.message : String(error)}\n`,
    );
  }
}
