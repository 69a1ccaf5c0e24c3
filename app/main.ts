// npm start: migrate, load reference data into an empty database (and demo data when it is embedded), serve, and stop
// gracefully on SIGTERM/SIGINT. With WEB_CONCURRENCY above 1 on PostgreSQL, this process becomes a cluster primary
// (app/process/cluster-primary.ts) that prepares the database once and forks that many workers, each of which runs
// this file again and only serves. `--role web|worker` (app/process/role.ts) splits serving the API from delivering
// webhooks; the default does both. A start-up that fails prints one line saying why and exits 1.
//
// This file is the entry only: it reads the configuration and hands the start to app/process/run-process.ts. Its
// top-level await resolves once the process serves (app/start.mjs waits on it). The start itself (the server, the
// database and every package they bring, most of a start's loading) is imported once the configuration has been read, so that a start refused for its settings says so without loading it.
import { OWNER_ONLY_UMASK } from '../db/private-files.ts';
import { loadConfig, type Config } from './config.ts';
import { parseRole, type ProcessRole } from './process/role.ts';
import { describeStartupError } from './startup-errors.ts';

// Whatever this process writes (the embedded database's files, keys, sockets) is its owner's alone, however it was
// started (db/private-files.ts); what an earlier start left open is tightened when the database opens.
process.umask(OWNER_ONLY_UMASK);

let config: Config;
let role: ProcessRole;
try {
  config = loadConfig();
  role = parseRole(process.argv.slice(2));
} catch (error) {
  failStart(describeStartupError(error, {}));
}
try {
  const [{ processContext }, { runProcess }] = await Promise.all([
    import('./process/context.ts'),
    import('./process/run-process.ts'),
  ]);
  await runProcess(processContext(config, role));
} catch (error) {
  failStart(describeStartupError(error, { database: config.database, port: config.port }));
}

function failStart(line: string): never {
  process.stderr.write(`could not start: ${line}\n`);
  process.exit(1);
}
