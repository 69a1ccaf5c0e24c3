// npm run cli -- <command>: the operator's tool for the database the server uses (migrations, seed data,
// partner API keys, holiday calendars). Exit codes: 0 done, 1 failed while running, 2 wrong command line.
// While npm start runs on the embedded database (which one process at a time may open), a command line runs in
// that server (app/cli/server-socket.ts); otherwise, and always on PostgreSQL, here.
import { errorMessage } from '../db/errors.ts';
import { opensNoDatabase, runCommandLine } from '../app/cli/commands.ts';
import { runInServer } from '../app/cli/server-socket.ts';
import { OWNER_ONLY_UMASK } from '../db/private-files.ts';

// The embedded database and the keys beside it that a command may write are the owner's alone (db/private-files.ts).
process.umask(OWNER_ONLY_UMASK);

const argv = process.argv.slice(2);
const debug = process.env.DEBUG === '1';

/**
 * The embedded database's directory, when the command line needs a database and the settings name one. The settings
 * are loaded only then: their module loads the packages behind every default it names, which the help never needs.
 */
async function embeddedDataDir(): Promise<string | undefined> {
  if (opensNoDatabase(argv)) return undefined;
  const { loadConfig } = await import('../app/config.ts');
  try {
    const { database } = loadConfig();
    return 'dataDir' in database && !database.dataDir.startsWith('memory://') ? database.dataDir : undefined;
  } catch {
    return undefined; // the command, run here, reports the settings that are wrong
  }
}

try {
  const dataDir = await embeddedDataDir();
  process.exitCode =
    (dataDir === undefined ? undefined : await runInServer(dataDir, argv, debug)) ??
    (await runCommandLine(argv, { debug }));
} catch (error) {
  process.stderr.write(`error: ${errorMessage(error)}\n`);
  process.exitCode = 1;
}
