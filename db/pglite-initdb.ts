// Run by openPglite (db/connect.ts) in a child process: creates the embedded database's data directory given as
// the only argument, and exits, taking initdb's memory with it. The parent holds the directory's lock meanwhile.
import { PGlite } from '@electric-sql/pglite';
import { PGLITE_CONF } from './pglite-options.ts';

const dataDir = process.argv[2];
if (!dataDir) {
  process.stderr.write('usage: pglite-initdb.ts DATA_DIR\n');
  process.exit(2);
}
const pglite = new PGlite(dataDir, { postgresqlconf: PGLITE_CONF });
await pglite.waitReady;
await pglite.close();
